"""What the spec takes from Superset when Superset is importable, and its stand-ins.

Superset pins its own SQLAlchemy, sqlglot, Flask and pandas, so it is not
installed where the package is developed and tested. Inside Superset's
environment (the only place the spec is used) the spec subclasses Superset's
``BaseEngineSpec``, which supplies every hook the spec does not declare;
without Superset it subclasses ``object``. Each name is imported on its own, so
a partial ``superset`` package (the tests' stand-in) gives what it has and the
stand-in for the rest.

Imports from superset/: inside functions: dialect.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # mypy checks the spec as the class without Superset: Superset's types are
    # not installed for it to check against.
    _Base = object
else:
    try:
        from superset.db_engine_specs.base import BaseEngineSpec as _Base
    except ImportError:
        _Base = object

__all__ = [
    "SUPERSET_INSTALLED",
    "BaseEngineSpec",
    "GenericDataType",
    "register_sqlglot_dialect",
    "superset_exception",
]

BaseEngineSpec: type = _Base

#: Whether Superset could be imported: the spec then subclasses its BaseEngineSpec.
SUPERSET_INSTALLED: bool = _Base is not object


class _GenericDataType(enum.IntEnum):
    """Superset's ``superset.utils.core.GenericDataType``, value for value."""

    NUMERIC = 0
    STRING = 1
    TEMPORAL = 2
    BOOLEAN = 3


def _generic_data_type() -> Any:
    try:
        from superset.utils.core import GenericDataType as superset_generic_data_type
    except ImportError:
        return _GenericDataType
    return superset_generic_data_type


#: Superset's GenericDataType when it is importable, else a copy with the same
#: members and values (what the frontend receives is the integer).
GenericDataType: type[_GenericDataType] = _generic_data_type()


def register_sqlglot_dialect() -> bool:
    """Tell Superset's SQL parser that ``trinity`` databases speak the trinity dialect.

    Superset parses every SQL Lab and chart statement with sqlglot, in the
    dialect ``superset.sql.parse.SQLGLOT_DIALECTS`` maps the engine to; an
    engine it does not list gets sqlglot's generic dialect, which cannot parse
    time travel (``FOR SYSTEM_VERSION AS OF 3``), ``SHOW``, ``DESCRIBE`` or
    ``CALL``. The dialect registered is
    :class:`~trinity_dbapi.superset.dialect.SupersetTrinity`: the trinity
    dialect, which also parses the bare clauses (metrics, filters) Superset
    checks on their own. The entry is set only where there is none, so a
    deployment's ``SQLGLOT_DIALECTS_EXTENSIONS`` (applied later, at app start)
    still wins.

    Returns:
        Whether Superset's parser was there to register with.
    """
    try:
        from superset.sql.parse import SQLGLOT_DIALECTS
    except ImportError:
        return False
    from trinity_dbapi.superset.dialect import SupersetTrinity

    SQLGLOT_DIALECTS.setdefault("trinity", SupersetTrinity)
    return True


def superset_exception(name: str) -> type[Exception] | None:
    """Superset's exception class ``superset.db_engine_specs.exceptions.<name>``, if importable."""
    try:
        from superset.db_engine_specs import exceptions
    except ImportError:
        return None
    found = getattr(exceptions, name, None)
    return found if isinstance(found, type) and issubclass(found, Exception) else None
