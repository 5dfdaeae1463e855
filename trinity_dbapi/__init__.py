"""trinity-dbapi: the TrinityLake lakehouse format in Python, with a SQL front end.

Importing this package is cheap: heavy dependencies (pyarrow, protobuf,
fsspec back ends) are imported by the modules that use them, on first use.
"""

from __future__ import annotations

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

__version__ = "0.1.0"

#: The TrinityLake format major version this implementation reads and writes.
FORMAT_MAJOR_VERSION = 0

__all__ = [
    "FORMAT_MAJOR_VERSION",
    "DataError",
    "DatabaseError",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "Warning",
    "__version__",
]
