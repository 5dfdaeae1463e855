"""What opening a connection imports: the driver and the session, not the engine's statements."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import trinity_dbapi

_PROBE = """
import json, sys
import trinity_dbapi
connection = trinity_dbapi.connect(sys.argv[1])
loaded = sorted(m for m in sys.modules if m.startswith("trinity_dbapi."))
connection.cursor().execute("SELECT 1")
after = sorted(m for m in sys.modules if m.startswith("trinity_dbapi."))
print(json.dumps([loaded, after]))
"""


def test_a_connection_imports_no_statement_module_until_it_runs_one(tmp_path: Path) -> None:
    """A connection that only reflects (SQLAlchemy's inspector) pays for no table layer.

    The table format's hooks are registered by the engine's front door, which
    the first statement imports; before it, nothing of ``tables/`` is loaded.
    """
    trinity_dbapi.connect(str(tmp_path / "lake")).close()  # create it
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "lake")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    loaded, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert [m for m in loaded if m.startswith("trinity_dbapi.tables.")] == []
    assert "trinity_dbapi.sql.engine.dispatch" not in loaded
    assert "trinity_dbapi.sql.engine.dispatch" in after
    assert "trinity_dbapi.tables.registration" in after
