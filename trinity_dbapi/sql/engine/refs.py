"""Branch and tag statements: CREATE, DROP, USE and MERGE BRANCH, CREATE and DROP TAG, SHOW.

Each CREATE or DROP commits on main by itself (refs live in main's
lakehouse definition: :mod:`trinity_dbapi.lakehouse.branches`), so it runs
outside the session's transaction and refuses to run inside an open one
that holds changes, which would otherwise look included. ``USE BRANCH``
switches the chain the session reads and writes. ``MERGE BRANCH`` is
:mod:`trinity_dbapi.lakehouse.merging`'s.

Imports from sql/engine/: result, session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from trinity_dbapi.errors import ProgrammingError, ReadOnlyError
from trinity_dbapi.format.definitions import MAIN
from trinity_dbapi.lakehouse import branches
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine.result import Result

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.sql.engine.session import Session

__all__ = ["run"]


def run(session: Session, stmt: model.RefCommand) -> Result:
    """Run one branch or tag statement."""
    action, name = stmt.action, stmt.name or ""
    if action == "SHOW BRANCHES":
        return _show(session, "branch")
    if action == "SHOW TAGS":
        return _show(session, "tag")
    if action == "USE BRANCH":
        session.use_branch(name)
        return Result()
    _require_changeable(session, action)
    # The open transaction holds no change (checked): it ends, so the next
    # statement reads the version this one commits.
    session.rollback()
    lake = session.lakehouse
    main = lake.main
    if action == "CREATE BRANCH":
        source = _source(session, stmt, default_main=True)
        branches.create_branch(main, name, source, if_not_exists=stmt.if_exists)
    elif action == "DROP BRANCH":
        if name == lake.branch:
            raise ProgrammingError(
                f"DROP BRANCH {name} is refused: this session is on it; run USE BRANCH main "
                "(or another branch) first"
            )
        branches.drop_branch(main, name, if_exists=stmt.if_exists)
    elif action == "CREATE TAG":
        source = _source(session, stmt, default_main=False)
        branches.create_tag(main, name, source, if_not_exists=stmt.if_exists)
    elif action == "DROP TAG":
        branches.drop_tag(main, name, if_exists=stmt.if_exists)
    elif action == "MERGE BRANCH":
        from trinity_dbapi.lakehouse import merging

        merged = merging.merge_branch(main, name, stmt.target or MAIN, author=lake.author)
        table = pa.table(
            {
                "source": [name],
                "target": [stmt.target or MAIN],
                "version": pa.array([merged.version], pa.int64()),
                "base_version": pa.array([merged.base_version], pa.int64()),
                "fast_forward": [merged.fast_forward],
                "objects_changed": pa.array([merged.objects_changed], pa.int64()),
            }
        )
        return Result(table, 1)
    return Result()


def _require_changeable(session: Session, action: str) -> None:
    if session.read_only:
        if not session.asked_read_only:
            session.lakehouse.require_unpinned(action)
        raise ReadOnlyError(
            f"{action} is refused: this connection is read-only; connect with "
            "read_only=False to change refs"
        )
    if session.in_transaction and session.transaction().has_changes:
        raise ProgrammingError(
            f"{action} inside a transaction that holds changes: it commits on its own, and the "
            "changes would look included; COMMIT or ROLLBACK first"
        )
    if not session.lakehouse_exists:
        raise ProgrammingError(
            f"{action} is refused: the lakehouse at {session.location!r} does not exist yet; "
            "create a table first (the first write creates the lakehouse)"
        )


def _source(session: Session, stmt: model.RefCommand, *, default_main: bool) -> Snapshot:
    """The version a new branch or tag starts from (its FROM clause)."""
    lake = session.lakehouse
    kind, source = stmt.source_kind, stmt.source
    if kind is None:
        return lake.main.snapshot() if default_main else lake.snapshot()
    if kind == "VERSION":
        return lake.snapshot(int(source))  # type: ignore[arg-type]
    if kind == "BRANCH":
        return lake.on_branch(str(source)).snapshot()
    return lake.snapshot_by_export(str(source))


def _show(session: Session, kind: str) -> Result:
    lake = session.lakehouse
    if not session.lakehouse_exists:
        refs: list[branches.Ref] = []
    else:
        refs = [r for r in branches.list_refs(lake) if r.kind == kind]
    current = lake.branch or MAIN
    columns: dict[str, pa.Array] = {
        f"{kind}_name": pa.array([r.name for r in refs], pa.string()),
        "version": pa.array([r.version for r in refs], pa.int64()),
    }
    if kind == "branch":
        columns["base_version"] = pa.array([r.base_version for r in refs], pa.int64())
        columns["current"] = pa.array([r.name == current for r in refs], pa.bool_())
    columns["root"] = pa.array([r.root for r in refs], pa.string())
    table = pa.table(columns)
    return Result(table, table.num_rows)
