"""Lakehouse administration as SQL procedures: ``CALL system.<name>(...)``.

Each procedure is a row of :data:`PROCEDURES`: its parameters (in positional
order, with defaults) and a function that runs it and returns a result set
describing what it did. Procedures act on the whole lakehouse, so they run
outside the session's transaction (refused while it has uncommitted changes).

Each reports its progress to the session's progress handler as one task
(files deleted or copied, versions checked, node files written), started
before the work and finished with ``done == total``.

Imports from sql/engine/: kartothek_import, progress, result, rewrite_files, session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.lakehouse.garbage import DEFAULT_GRACE_PERIOD_MILLIS
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine.kartothek_import import import_kartothek
from trinity_dbapi.sql.engine.progress import NodeFileProgress
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.rewrite_files import rewrite_data_files
from trinity_dbapi.sql.engine.session import Session

_REQUIRED = object()


@dataclass(frozen=True)
class Procedure:
    """A callable procedure: parameter names with defaults, and what it does."""

    parameters: tuple[tuple[str, Any], ...]
    run: Callable[[Session, dict[str, Any]], pa.Table]
    summary: str
    #: Whether it changes the lakehouse (refused on read-only connections).
    writes: bool = True
    #: Whether it is the recovery of a connection opened with ``version=N``.
    recovers: bool = False


def _rollback_to_version(session: Session, args: dict[str, Any]) -> pa.Table:
    version = _int("version", args["version"])
    progress = _node_files(session, f"roll back to version {version}")
    snap = session.lakehouse.maintenance.rollback(version, retry=session.retry, progress=progress)
    return pa.table(
        {
            "rolled_back_to": pa.array([version], pa.int64()),
            "new_version": pa.array([snap.version], pa.int64()),
        }
    )


def _export_snapshot(session: Session, args: dict[str, Any]) -> pa.Table:
    version = args["version"]
    name = _str("name", args["name"])
    progress = session.task(f"export snapshot {name}", "files")
    progress.start()
    result = session.lakehouse.maintenance.export_snapshot(
        name,
        version=None if version is None else _int("version", version),
        mode=_str("mode", args["mode"]),
        target=None if args["target"] is None else _str("target", args["target"]),
        depth=None if args["depth"] is None else _int("depth", args["depth"]),
        progress=progress.counter,
    )
    return pa.table(
        {
            "name": [result.name],
            "version": pa.array([result.version], pa.int64()),
            "mode": [result.mode],
            "location": [result.location],
            "files_copied": pa.array([result.files_copied], pa.int64()),
            "bytes_copied": pa.array([result.bytes_copied], pa.int64()),
            "recorded_in_version": pa.array([result.recorded_in_version], pa.int64()),
        }
    )


def _expire_versions(session: Session, args: dict[str, Any]) -> pa.Table:
    older_than = args["older_than"]
    if older_than is not None and not isinstance(older_than, datetime | int | float):
        raise ProgrammingError(
            f"argument older_than of system.expire_versions must be a timestamp, not "
            f"{older_than!r}; write older_than => TIMESTAMP '2026-01-01 00:00:00'"
        )
    retain = args["retain_last"]
    dry_run = _bool("dry_run", args["dry_run"])
    progress = session.task("expire versions" + (" (dry run)" if dry_run else ""), "versions")
    progress.start()
    result = session.lakehouse.maintenance.expire_versions(
        older_than=older_than,
        retain_last=None if retain is None else _int("retain_last", retain),
        dry_run=dry_run,
        progress=progress.counter,
    )
    return pa.table(
        {
            "expired_versions": pa.array([list(result.expired)], pa.list_(pa.int64())),
            "retained_versions": pa.array([list(result.retained)], pa.list_(pa.int64())),
            "dry_run": [result.dry_run],
        }
    )


def _compact(session: Session, args: dict[str, Any]) -> pa.Table:
    progress = _node_files(session, "compact")
    snap = session.lakehouse.maintenance.compact(retry=session.retry, progress=progress)
    return pa.table({"new_version": pa.array([snap.version], pa.int64())})


def _collect_garbage(session: Session, args: dict[str, Any]) -> pa.Table:
    grace_period_millis = _int("grace_period_millis", args["grace_period_millis"])
    dry_run = _bool("dry_run", args["dry_run"])
    # Started before the (long) search for reachable files; the total is
    # known once it is over.
    progress = session.task("collect garbage" + (" (dry run)" if dry_run else ""), "files")
    progress.start()
    result = session.lakehouse.maintenance.collect_garbage(
        grace_period_millis=grace_period_millis,
        dry_run=dry_run,
        progress=progress.counter,
    )
    return pa.table(
        {
            "deleted_files": pa.array([len(result.deleted)], pa.int64()),
            "reachable_files": pa.array([result.reachable], pa.int64()),
            "too_young_files": pa.array([result.too_young], pa.int64()),
            "foreign_files": pa.array([result.foreign], pa.int64()),
            "dry_run": [result.dry_run],
        }
    )


def _check_integrity(session: Session, args: dict[str, Any]) -> pa.Table:
    from trinity_dbapi.tables.integrity import check_integrity

    # The files are found as the check goes: the total is known at the end.
    progress = session.task("check integrity", "files")
    progress.start()
    snapshot = session.transaction().snapshot  # the version the session reads
    problems, checked = check_integrity(session.lakehouse, snapshot, each_file=progress.update)
    progress.finish(checked)
    # As SQLite's PRAGMA integrity_check: one row 'ok' when nothing is wrong.
    rows: list[tuple[str | None, str | None, str]] = [
        (p.file, p.object, p.problem) for p in problems
    ] or [(None, None, "ok")]
    return pa.table(
        {
            "file": pa.array([r[0] for r in rows], pa.string()),
            "object": pa.array([r[1] for r in rows], pa.string()),
            "problem": pa.array([r[2] for r in rows], pa.string()),
        }
    )


def _sync_kartothek(session: Session, args: dict[str, Any]) -> pa.Table:
    from trinity_dbapi.format.keys import table_key
    from trinity_dbapi.lakehouse.derived import publish_tables

    lakehouse = session.lakehouse
    snapshot = lakehouse.snapshot()  # the newest version: what the files must describe
    table_keys = None
    if args["table"] is not None:
        text = _str("table", args["table"])
        namespace, dot, name = text.partition(".")
        if not dot:
            namespace, name = session.namespace, text
        key = table_key(namespace, name, snapshot.definition.key_limits)
        if snapshot.get(key) is None:
            raise ProgrammingError(
                f"system.sync_kartothek: table {namespace}.{name} does not exist in the newest "
                "version; name an existing table as table => 'namespace.table', or omit it "
                "to rewrite the files of every table"
            )
        table_keys = [key]
    progress = session.task("sync Kartothek metadata", "tables")
    progress.start()
    published = publish_tables(lakehouse, snapshot, table_keys)
    progress.finish(len(published))
    rows = [(f"{p.namespace}.{p.table}", path) for p in published for path in p.paths]
    return pa.table(
        {
            "table_name": pa.array([r[0] for r in rows], pa.string()),
            "file": pa.array([r[1] for r in rows], pa.string()),
            "version": pa.array([snapshot.version] * len(rows), pa.int64()),
        }
    )


def _import_kartothek(session: Session, args: dict[str, Any]) -> pa.Table:
    namespace, name = _table(session, _str("table", args["table"]), "system.import_kartothek")
    return import_kartothek(
        session,
        namespace,
        name,
        location=_str("location", args["location"]),
        dataset_uuid=_str("dataset_uuid", args["dataset_uuid"]),
        kartothek_table=_str("kartothek_table", args["kartothek_table"]),
        mode=_str("mode", args["mode"]),
    )


def _rewrite_data_files(session: Session, args: dict[str, Any]) -> pa.Table:
    namespace, name = _table(session, _str("table", args["table"]), "system.rewrite_data_files")
    where = args["where"]
    return rewrite_data_files(
        session,
        namespace,
        name,
        target_file_size_bytes=_int("target_file_size_bytes", args["target_file_size_bytes"]),
        where=None if where is None else _str("where", where),
        min_input_files=_int("min_input_files", args["min_input_files"]),
    )


def _node_files(session: Session, task: str) -> NodeFileProgress | None:
    """Progress of a procedure's commit: node files written, reported from the start."""
    progress = session.node_file_progress(task, quiet=False)
    if progress is not None:
        progress.start()
    return progress


#: Every procedure of the ``system`` namespace.
PROCEDURES: Mapping[str, Procedure] = {
    "rollback_to_version": Procedure(
        (("version", _REQUIRED),),
        _rollback_to_version,
        "a new version whose content equals the given one",
        recovers=True,
    ),
    "export_snapshot": Procedure(
        (
            ("name", _REQUIRED),
            ("version", None),
            ("mode", "minimal"),
            ("target", None),
            ("depth", None),
        ),
        _export_snapshot,
        "record (and copy) a named snapshot",
    ),
    "expire_versions": Procedure(
        (("older_than", None), ("retain_last", None), ("dry_run", False)),
        _expire_versions,
        "delete old root versions past the retention rules",
    ),
    "compact": Procedure((), _compact, "flush every write buffer down the tree"),
    "collect_garbage": Procedure(
        (("grace_period_millis", DEFAULT_GRACE_PERIOD_MILLIS), ("dry_run", False)),
        _collect_garbage,
        "delete files no retained version or export reaches",
    ),
    "check_integrity": Procedure(
        (),
        _check_integrity,
        "read every file the version reaches; one row per problem, or one row 'ok'",
        writes=False,
    ),
    "sync_kartothek": Procedure(
        (("table", None),),
        _sync_kartothek,
        "rewrite Kartothek's main metadata file of every managed table (or one)",
    ),
    "import_kartothek": Procedure(
        (
            ("table", _REQUIRED),
            ("location", _REQUIRED),
            ("dataset_uuid", _REQUIRED),
            ("kartothek_table", "table"),
            ("mode", "copy"),
        ),
        _import_kartothek,
        "create a table from a Kartothek dataset: schema, partitions, indices, one commit",
    ),
    "rewrite_data_files": Procedure(
        (
            ("table", _REQUIRED),
            ("target_file_size_bytes", 128 * 1024 * 1024),
            ("where", None),
            ("min_input_files", 2),
        ),
        _rewrite_data_files,
        "rewrite a table's small data files into files near a target size, one commit",
    ),
}


def call(session: Session, stmt: model.Call) -> Result:
    """Run ``CALL system.<procedure>(...)``."""
    namespace, name = stmt.procedure.namespace or "system", stmt.procedure.name
    procedure = PROCEDURES.get(name) if namespace == "system" else None
    if procedure is None:
        raise ProgrammingError(
            f"procedure {namespace}.{name} does not exist; the procedures are "
            + ", ".join(f"system.{p}" for p in PROCEDURES)
        )
    args = _bind(f"system.{name}", procedure, stmt.args, stmt.kwargs)
    # On a connection pinned to a version (connect(version=N)) the recovery
    # rollback is the one change allowed: it is the way back to writing.
    recovering = procedure.recovers and session.pinned and not session.asked_read_only
    session.require_outside_transaction(
        f"CALL system.{name}", writes=procedure.writes and not recovering
    )
    table = procedure.run(session, args)
    return Result(table, table.num_rows)


def _bind(
    where: str, procedure: Procedure, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    names = [name for name, _ in procedure.parameters]
    signature = f"{where}({', '.join(names)})"
    if len(args) > len(names):
        raise ProgrammingError(
            f"{where} takes at most {len(names)} arguments, {len(args)} given: {signature}"
        )
    bound = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        if key not in names:
            raise ProgrammingError(f"{where} has no parameter {key!r}: {signature}")
        if key in bound:
            raise ProgrammingError(f"{where} got parameter {key!r} twice: {signature}")
        bound[key] = value
    for name, default in procedure.parameters:
        if name not in bound:
            if default is _REQUIRED:
                raise ProgrammingError(f"{where} needs the argument {name!r}: {signature}")
            bound[name] = default
    return bound


def _table(session: Session, text: str, procedure: str) -> tuple[str, str]:
    """``'ns.name'`` (or ``'name'``, in the session's namespace) as namespace and name."""
    namespace, dot, name = text.partition(".")
    if not dot:
        namespace, name = session.namespace, text
    if not namespace or not name:
        raise ProgrammingError(
            f"{procedure}: table {text!r} is not a table name; write table => 'namespace.table'"
        )
    return namespace, name


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProgrammingError(f"argument {name} must be an integer, not {value!r}")
    return value


def _str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ProgrammingError(f"argument {name} must be a string, not {value!r}")
    return value


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ProgrammingError(f"argument {name} must be TRUE or FALSE, not {value!r}")
    return value
