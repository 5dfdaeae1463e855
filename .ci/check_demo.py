"""Fail unless the lakehouse the demo left holds tables, and every one of them holds rows.

Usage: ``python .ci/check_demo.py demo-lakehouse``. Reads through the
installed driver, read-only, and prints each table's row count.
"""

from __future__ import annotations

import sys

import trinity_dbapi


def main(folder: str) -> int:
    try:
        conn = trinity_dbapi.connect(folder, create=False, read_only=True)
    except trinity_dbapi.Error as exc:
        print(f"check_demo.py: no lakehouse at {folder}: {exc}", file=sys.stderr)
        return 1
    with conn:
        cur = conn.cursor()
        tables = cur.execute(
            "SELECT namespace_name, table_name FROM system.tables ORDER BY 1, 2"
        ).fetchall()
        empty = []
        for namespace, table in tables:
            quoted = ".".join('"' + name.replace('"', '""') + '"' for name in (namespace, table))
            (rows,) = cur.execute(f"SELECT count(*) FROM {quoted}").fetchone()
            print(f"{namespace}.{table}: {rows:,} rows")
            if rows == 0:
                empty.append(f"{namespace}.{table}")
    if not tables:
        print(f"check_demo.py: the lakehouse at {folder} has no tables", file=sys.stderr)
        return 1
    if empty:
        print(f"check_demo.py: tables without rows: {', '.join(empty)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "demo-lakehouse"))
