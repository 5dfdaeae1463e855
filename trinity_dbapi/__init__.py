"""trinity-dbapi: the TrinityLake lakehouse format in Python, with a SQL front end.

Importing this package is cheap: heavy dependencies (pyarrow, protobuf,
fsspec back ends) are imported by the modules that use them, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Warning,
)
from trinity_dbapi.format.version import FORMAT_MAJOR_VERSION as _FORMAT_MAJOR_VERSION

__version__ = "0.2.0"

# PEP 249 module globals.
apilevel = "2.0"
#: Threads may share the module and connections (each connection serialises
#: its statements); cursors are not shared.
threadsafety = 2
paramstyle = "qmark"

# PEP 249 type objects and constructors, loaded on first use so that
# ``import trinity_dbapi`` stays cheap.
_TYPES = frozenset(
    {
        "Date",
        "Time",
        "Timestamp",
        "DateFromTicks",
        "TimeFromTicks",
        "TimestampFromTicks",
        "Binary",
        "STRING",
        "BINARY",
        "NUMBER",
        "DATETIME",
        "ROWID",
    }
)


def connect(uri: str, **options: Any) -> Connection:
    """Open a PEP 249 connection; see :func:`trinity_dbapi.dbapi.connection.connect`."""
    from trinity_dbapi.dbapi.connection import connect as _connect

    return _connect(uri, **options)


def __getattr__(name: str) -> Any:
    if name in _TYPES:
        from trinity_dbapi.dbapi import types

        return getattr(types, name)
    if name == "ProgressEvent":  # what a connection's progress handler receives
        from trinity_dbapi.sql.engine.progress import ProgressEvent

        return ProgressEvent
    raise AttributeError(f"module 'trinity_dbapi' has no attribute {name!r}")


#: The TrinityLake format major version this implementation reads and writes.
FORMAT_MAJOR_VERSION = _FORMAT_MAJOR_VERSION

if TYPE_CHECKING:
    from trinity_dbapi.dbapi.connection import Connection
    from trinity_dbapi.sql.engine.progress import ProgressEvent

__all__ = [
    "BINARY",
    "DATETIME",
    "FORMAT_MAJOR_VERSION",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "ProgressEvent",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "Warning",
    "__version__",
    "apilevel",
    "connect",
    "paramstyle",
    "threadsafety",
]
