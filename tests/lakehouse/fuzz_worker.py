"""The read battery of the file fuzz campaign, run in a child process.

``python -m tests.lakehouse.fuzz_worker VERSION DIR...`` runs a fixed set of
reads (connect, full and filtered SELECTs, time travel to ``VERSION``, catalog
queries, DESCRIBE) against the lakehouse in each ``DIR`` and prints one JSON
line per directory, flushed at once: the parent knows which case a crash or a
hang happened in. Each read opens its own connection, so a failure cannot mask
the next read.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def battery(time_travel_version: int) -> dict[str, str | None]:
    """Read name -> SQL (None: connect only)."""
    return {
        "connect": None,
        "all": "SELECT p, k, v FROM ns.t ORDER BY p, k",
        "indexed": "SELECT p, k, v FROM ns.t WHERE k = 7 ORDER BY p, k",
        "partition": "SELECT p, k, v FROM ns.t WHERE p = 1 ORDER BY k",
        "time_travel": (
            f"SELECT p, k, v FROM ns.t FOR SYSTEM_VERSION AS OF {time_travel_version} ORDER BY p, k"
        ),
        "namespaces": "SHOW NAMESPACES",
        "tables": "SELECT table_schema, table_name FROM information_schema.tables ORDER BY 1, 2",
        "describe": "DESCRIBE ns.t",
        "versions": "SELECT version, previous_root FROM system.versions ORDER BY version",
    }


def run_one(uri: str, sql: str | None) -> dict[str, Any]:
    """The outcome of one read: its rows, or the exception's class, MRO and message."""
    import trinity_dbapi

    try:
        with trinity_dbapi.connect(uri, read_only=True) as conn:
            if sql is None:
                return {"rows": []}
            rows = conn.cursor().execute(sql).fetchall()
            return {"rows": [[repr(value) for value in row] for row in rows]}
    except BaseException as exc:  # noqa: BLE001 - reported: the parent judges every outcome
        return {
            "error": type(exc).__name__,
            "mro": [f"{c.__module__}.{c.__qualname__}" for c in type(exc).__mro__],
            "message": str(exc),
        }


def main(argv: list[str]) -> None:
    reads = battery(int(argv[0]))
    for directory in argv[1:]:
        outcome = {name: run_one(directory, sql) for name, sql in reads.items()}
        print(json.dumps({"case": directory, "outcome": outcome}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
