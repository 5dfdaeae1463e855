"""The PEP 249 (DB-API 2.0) driver of trinity-dbapi.

:class:`ProgressEvent` (what ``Connection.progress`` receives) and
``ProgressHandler`` are re-exported here from :mod:`trinity_dbapi.sql.engine.progress`,
loaded on first use so that importing the driver stays cheap.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``params`` (parameters), ``pyvalues`` (Arrow results as Python values),
   ``types`` (type objects and constructors), ``preview`` (a cursor's
   pending rows laid out for ``repr`` and notebooks), ``opening`` (the
   lakehouse a connection names, or the stand-in of one not created yet)
2. ``cursor`` (which knows its connection by a small protocol)
3. ``connection``
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trinity_dbapi.sql.engine.progress import ProgressEvent, ProgressHandler

_FROM_PROGRESS = frozenset({"ProgressEvent", "ProgressHandler"})


def __getattr__(name: str) -> Any:
    if name in _FROM_PROGRESS:
        from trinity_dbapi.sql.engine import progress

        return getattr(progress, name)
    raise AttributeError(f"module 'trinity_dbapi.dbapi' has no attribute {name!r}")


__all__ = ["ProgressEvent", "ProgressHandler"]
