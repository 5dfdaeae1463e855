"""The options of the ``trinitylake`` Spark data source, parsed once on the driver.

Everything a Spark task needs travels in picklable values (:class:`Location`,
dataset metadata, Arrow schemas), because tasks, and the write's ``commit``,
run in Python worker processes that share nothing with the driver.

Imports from spark/: nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from trinity_dbapi.errors import ProgrammingError

#: Prefix of options passed to the fsspec file system (as in SQLAlchemy URLs).
STORAGE_PREFIX = "storage."

#: Spark's setting of the option names whose values its plans hide (the
#: logical plans of writes and of ``CREATE TEMPORARY VIEW ... USING``, which
#: ``explain``, query listeners and logs print), on top of
#: ``spark.redaction.regex`` (``secret|password|token|access.key|credential``,
#: which misses ``storage.account_key``, ``storage.connection_string``,
#: ``storage.key`` and a ``storageOptions`` without such a word).
OPTIONS_REDACTION_CONF = "spark.sql.redaction.options.regex"


def secret_options_pattern() -> str:
    """A Java regex matching the names of this source's options that may hold credentials.

    ``storageOptions`` (JSON: any of its values may be one), and every
    ``storage.<option>`` whose name holds a word of
    :data:`~trinity_dbapi.storage.redact.SECRET_WORDS`, the words that make a
    storage option secret everywhere else.
    """
    import re

    from trinity_dbapi.storage.redact import SECRET_WORDS

    words = "|".join(re.escape(word) for word in SECRET_WORDS)
    prefix = re.escape(STORAGE_PREFIX)
    return f"(?i)^(?:storageoptions|{prefix}.*(?:{words}).*)$"


@dataclass(frozen=True)
class Location:
    """Where a lakehouse is: its URI, the fsspec storage options (credentials) and the branch.

    ``branch`` None is main; :meth:`lakehouse` opens the branch's chain, which
    reads and commits the branch (data files are shared: :meth:`storage` is
    the same for every branch).
    """

    uri: str
    # Out of the repr: Spark prints plans, options and failed tasks' arguments.
    storage_options: Mapping[str, Any] = field(default_factory=dict, repr=False)
    branch: str | None = None

    def __repr__(self) -> str:
        from trinity_dbapi.storage.redact import redact_userinfo

        hidden = (
            f", storage_options=<{len(self.storage_options)} hidden>"
            if self.storage_options
            else ""
        )
        branch = f", branch={self.branch!r}" if self.branch is not None else ""
        return f"Location({redact_userinfo(self.uri)!r}{hidden}{branch})"

    def storage(self) -> Any:
        """Open the lakehouse storage (in whichever process runs this)."""
        from trinity_dbapi.storage import open_storage

        return open_storage(self.uri, storage_options=dict(self.storage_options) or None)

    def lakehouse(self, *, create: bool = False) -> Any:
        """Open the lakehouse (on :attr:`branch`); with ``create``, make one where there is none.

        Raises:
            NoSuchRefError: :attr:`branch` names no branch (the message says
                how to list them).
        """
        from trinity_dbapi.errors import LakehouseExistsError, LakehouseNotFoundError
        from trinity_dbapi.lakehouse.lakehouse import Lakehouse

        options = dict(self.storage_options) or None
        try:
            opened = Lakehouse.open(self.uri, storage_options=options)
        except LakehouseNotFoundError:
            if not create or self.branch is not None:  # a new lakehouse has no branch
                raise
            try:
                opened = Lakehouse.create(self.uri, storage_options=options)
            except LakehouseExistsError:  # another writer created it first
                opened = Lakehouse.open(self.uri, storage_options=options)
        return opened if self.branch is None else opened.on_branch(self.branch)


@dataclass(frozen=True)
class SourceOptions:
    """The parsed options of one read or write."""

    location: Location
    namespace: str
    table: str
    version: int | None = None
    timestamp: datetime | None = None
    create_table: bool = False
    partition_by: tuple[str, ...] = ()
    push_filters: bool = True
    namespaces: frozenset[str] | None = None  # a catalog table's rows: these namespaces


def parse_options(options: Mapping[str, str], *, push_filters: bool = True) -> SourceOptions:
    """Parse the data source options (Spark passes them case-insensitively as text).

    Raises:
        ProgrammingError: a missing ``uri`` or table name, or a bad value, named.
    """
    values = {str(key).lower(): value for key, value in options.items()}
    uri = values.get("uri")
    if not uri:
        raise ProgrammingError(
            'the trinitylake data source needs the lakehouse: .option("uri", "<path or URL>")'
        )
    namespace, table = _table_name(values.get("path") or values.get("table") or "")
    storage: dict[str, Any] = {}
    if "storageoptions" in values:
        storage.update(_json_object("storageOptions", values["storageoptions"]))
    for key, value in values.items():
        if key.startswith(STORAGE_PREFIX) and len(key) > len(STORAGE_PREFIX):
            storage[_original_key(options, key)[len(STORAGE_PREFIX) :]] = _storage_value(value)
    version = values.get("versionasof")
    timestamp = values.get("timestampasof")
    if version is not None and timestamp is not None:
        raise ProgrammingError("give versionAsOf or timestampAsOf, not both")
    partition_by = _partition_by(values.get("partitionby") or "")
    namespaces = values.get("namespaces")
    return SourceOptions(
        location=Location(uri, storage, _branch(values.get("branch"))),
        namespace=namespace,
        table=table,
        version=_int("versionAsOf", version) if version is not None else None,
        timestamp=_timestamp(timestamp) if timestamp is not None else None,
        create_table=_boolean("createTable", values.get("createtable", "false")),
        push_filters=_boolean("pushFilters", values.get("pushfilters", str(push_filters))),
        partition_by=partition_by,
        namespaces=None if namespaces is None else _namespaces(namespaces),
    )


def _branch(text: str | None) -> str | None:
    """``branch``: the branch read and written (None, absent or ``main``: main)."""
    if text is None or text == "main":
        return None
    if not text.strip():
        raise ProgrammingError(
            "option branch must name a branch, not an empty text; SHOW BRANCHES lists them "
            "(or read system.refs), and main is the default"
        )
    return text


def _table_name(text: str) -> tuple[str, str]:
    parts = text.split(".")
    if len(parts) != 2 or not all(parts):
        raise ProgrammingError(
            f"trinitylake reads and writes 'namespace.table', got {text!r}: "
            'load("sales.orders") or save("sales.orders")'
        )
    return parts[0], parts[1]


def _partition_by(text: str) -> tuple[str, ...]:
    """``partitionBy``: names comma-separated, or a JSON list (for names holding commas)."""
    if text.lstrip().startswith("["):
        try:
            names = json.loads(text)
        except ValueError:
            names = None
        if isinstance(names, list) and names and all(isinstance(n, str) and n for n in names):
            return tuple(names)
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _namespaces(text: str) -> frozenset[str]:
    """``namespaces``: a JSON list of names (``[]``: none), or names comma-separated."""
    if text.lstrip().startswith("["):
        try:
            names = json.loads(text)
        except ValueError:
            names = None
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            return frozenset(names)
        raise ProgrammingError(f"option namespaces must be a JSON list of names, not {text!r}")
    return frozenset(name.strip() for name in text.split(",") if name.strip())


def _original_key(options: Mapping[str, str], lowered: str) -> str:
    # Spark lower-cases option keys; fsspec options are snake_case anyway, but
    # keep the caller's spelling when it is still there.
    return next((key for key in options if str(key).lower() == lowered), lowered)


def _storage_value(value: str) -> Any:
    """A ``storage.<option>`` value: JSON when it reads as JSON (or a Python dict), else text."""
    try:
        return json.loads(value)
    except ValueError:
        pass
    mapping = _python_dict(value)
    return value if mapping is None else mapping


def _python_dict(text: str) -> dict[str, Any] | None:
    """``text`` as the dict it spells in Python, or None.

    PySpark turns an option's value into text with ``str()``: a dict given
    to ``.option()`` arrives as its Python repr (single quotes, ``True``),
    which JSON does not read.
    """
    if not text.lstrip().startswith("{"):
        return None
    import ast

    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None  # its message would repeat the text, which may hold credentials
    return value if isinstance(value, dict) else None


def _json_object(name: str, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        mapping = _python_dict(text)
        if mapping is not None:
            return mapping
        # json's message names a position, never the text (it holds credentials).
        raise ProgrammingError(f"option {name} must be a JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise ProgrammingError(
            f"option {name} must be a JSON object (of storage options), not a "
            f"{type(value).__name__}; its text is not shown, as it may hold credentials"
        )
    return value


def _int(name: str, text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise ProgrammingError(f"option {name} must be a version number, not {text!r}") from None
    if number < 0:
        raise ProgrammingError(f"option {name} must be a version number >= 0, not {number}")
    return number


def _timestamp(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ProgrammingError(
            f"option timestampAsOf must be an ISO timestamp such as '2026-01-31 12:00:00', "
            f"not {text!r}"
        ) from None
    # Naive timestamps are UTC, as everywhere in trinity-dbapi.
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _boolean(name: str, text: str) -> bool:
    lowered = str(text).strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ProgrammingError(f"option {name} must be true or false, not {text!r}")
