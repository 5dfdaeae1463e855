"""What the dialect needs from SQLAlchemy that only the 2.x line has, for 1.4 too.

The dialect runs on SQLAlchemy 1.4 (Apache Superset 6.1 pins ``<2``) and on
2.x. Every name here is found by feature detection, never by comparing
version strings, and nothing of SQLAlchemy's is patched: where 2.x has the
name it is SQLAlchemy's own, otherwise a stand-in that does what the dialect
needs of it on 1.4.

* the ``Reflected*`` TypedDicts: plain ``dict`` at run time on 1.4 (they are
  annotations only);
* :class:`ObjectKind` and :class:`ObjectScope`: 2.x's ``get_multi_*``
  arguments; 1.4 never calls those methods, but their signatures name them;
* :func:`flexi_cache`: caches ``_namespace_facts`` on 2.x; on 1.4 only the
  ``get_multi_*`` methods call it, so it is left uncached;
* :func:`reflection_cache`: SQLAlchemy's ``reflection.cache``, or the same
  cache where 1.4's cannot decorate a method with PEP 563 annotations;
* :class:`DOUBLE`: the generic ``DOUBLE`` type (2.0 added it);
* :func:`type_compiler`: the dialect's type compiler instance;
* :data:`DIALECT_SETS_ISOLATION_LEVEL`: whether SQLAlchemy applies
  ``create_engine(isolation_level=...)`` (2.x) or the dialect must (1.4);
* :func:`driver_connection`: the trinity DB-API connection under a
  SQLAlchemy connection.

Other 2.x-only dialect attributes (``use_insertmanyvalues``,
``insert_returning``, ``type_compiler_cls``, ``import_dbapi``) are read by
2.x and ignored by 1.4, so they need no stand-in.

Imports from sqlalchemy/: nothing.
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import types as sqltypes
from sqlalchemy.engine import default, reflection

if TYPE_CHECKING:
    # mypy checks against the newest SQLAlchemy, which has them all.
    from sqlalchemy.engine.interfaces import (
        ReflectedCheckConstraint,
        ReflectedColumn,
        ReflectedForeignKeyConstraint,
        ReflectedIndex,
        ReflectedPrimaryKeyConstraint,
        ReflectedTableComment,
        ReflectedUniqueConstraint,
    )
    from sqlalchemy.engine.reflection import ObjectKind, ObjectScope
    from sqlalchemy.types import DOUBLE

    from trinity_dbapi.dbapi.connection import Connection
else:
    try:
        from sqlalchemy.engine.interfaces import (
            ReflectedCheckConstraint,
            ReflectedColumn,
            ReflectedForeignKeyConstraint,
            ReflectedIndex,
            ReflectedPrimaryKeyConstraint,
            ReflectedTableComment,
            ReflectedUniqueConstraint,
        )
    except ImportError:  # SQLAlchemy 1.4: reflection returns plain dicts
        ReflectedCheckConstraint = ReflectedColumn = ReflectedForeignKeyConstraint = dict
        ReflectedIndex = ReflectedPrimaryKeyConstraint = ReflectedTableComment = dict
        ReflectedUniqueConstraint = dict

    try:
        from sqlalchemy.engine.reflection import ObjectKind, ObjectScope
    except ImportError:  # SQLAlchemy 1.4: no get_multi_* methods call for them

        class ObjectKind(enum.Flag):
            """The kinds of object ``get_multi_*`` reflects (SQLAlchemy 2's values)."""

            TABLE = enum.auto()
            VIEW = enum.auto()
            MATERIALIZED_VIEW = enum.auto()
            ANY_VIEW = VIEW | MATERIALIZED_VIEW
            ANY = TABLE | VIEW | MATERIALIZED_VIEW

        class ObjectScope(enum.Flag):
            """The scopes ``get_multi_*`` reflects (SQLAlchemy 2's values)."""

            DEFAULT = enum.auto()
            TEMPORARY = enum.auto()
            ANY = DEFAULT | TEMPORARY

    if hasattr(sqltypes, "DOUBLE"):
        DOUBLE = sqltypes.DOUBLE
    else:  # SQLAlchemy 1.4

        class DOUBLE(sqltypes.Float):
            """SQL ``DOUBLE``: a binary float of double precision (FLOAT8)."""

            __visit_name__ = "DOUBLE"


__all__ = [
    "DIALECT_SETS_ISOLATION_LEVEL",
    "DOUBLE",
    "ObjectKind",
    "ObjectScope",
    "ReflectedCheckConstraint",
    "ReflectedColumn",
    "ReflectedForeignKeyConstraint",
    "ReflectedIndex",
    "ReflectedPrimaryKeyConstraint",
    "ReflectedTableComment",
    "ReflectedUniqueConstraint",
    "driver_connection",
    "flexi_cache",
    "reflection_cache",
    "type_compiler",
]

F = TypeVar("F", bound=Callable[..., Any])


def _info_cache(fn: F) -> F:
    """SQLAlchemy 1.4's ``reflection.cache``, as a plain ``functools.wraps`` wrapper.

    The result is kept in the inspector's ``info_cache`` under the method's
    name, its string arguments and its other keyword arguments, and
    recomputed when it is ``None`` (as SQLAlchemy's does).
    """

    @functools.wraps(fn)
    def cached(self: Any, connection: Any, *args: Any, **kw: Any) -> Any:
        info_cache = kw.get("info_cache")
        if info_cache is None:
            return fn(self, connection, *args, **kw)
        key = (
            fn.__name__,
            tuple(arg for arg in args if isinstance(arg, str)),
            tuple((name, _hashable(value)) for name, value in kw.items() if name != "info_cache"),
        )
        try:
            found = info_cache.get(key)
        except TypeError:  # a keyword argument holds an object with no value equality
            return fn(self, connection, *args, **kw)
        if found is None:
            found = info_cache[key] = fn(self, connection, *args, **kw)
        return found

    return cached  # type: ignore[return-value]


def _hashable(value: Any) -> Any:
    """A keyword argument as a cache key part: lists and dicts as tuples.

    SQLAlchemy 1.4's ``Table(autoload_with=...)`` passes the table's dialect
    options to every reflection method once ``get_table_options`` has
    reported them (``trinity_partitioned_by=["day"]``), and 1.4's own cache
    fails on the list.
    """
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(item) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    return value


def reflection_cache(fn: F) -> F:
    """``@reflection.cache``: a reflection method's result kept per inspector.

    SQLAlchemy's own decorator where it can decorate ``fn``. SQLAlchemy 1.4's
    rebuilds the method's signature as source text, annotations included,
    and fails with ``SyntaxError`` on the annotation strings that
    ``from __future__ import annotations`` leaves (``-> 'list[str]'`` inside
    a quoted string); that case gets the same cache written as a wrapper.
    """
    try:
        return reflection.cache(fn)  # type: ignore[no-any-return]
    except SyntaxError:
        return _info_cache(fn)


def _uncached(*traverse_args: Any) -> Callable[[F], F]:
    def decorate(fn: F) -> F:
        return fn

    return decorate


#: SQLAlchemy 2's ``reflection.flexi_cache`` (a cache keyed by the named
#: arguments), or no cache on 1.4, where only ``get_multi_*`` would use it.
flexi_cache: Callable[..., Callable[[F], F]] = getattr(reflection, "flexi_cache", _uncached)


#: Whether ``DefaultDialect`` takes ``create_engine(isolation_level=...)`` and sets
#: it on each new connection (SQLAlchemy 2); on 1.4 every dialect does it itself.
DIALECT_SETS_ISOLATION_LEVEL = (
    "isolation_level" in inspect.signature(default.DefaultDialect.__init__).parameters
)


def type_compiler(dialect: Any) -> Any:
    """The dialect's type compiler instance.

    SQLAlchemy 2 names it ``type_compiler_instance`` (and keeps
    ``type_compiler`` as a legacy alias); 1.4 has ``type_compiler`` only.
    """
    found = getattr(dialect, "type_compiler_instance", None)
    return found if found is not None else dialect.type_compiler


def driver_connection(connection: Any) -> Connection:
    """The trinity DB-API connection a SQLAlchemy ``Connection`` runs on.

    SQLAlchemy's ``connection.connection`` is the pool's proxy, whose
    ``driver_connection`` is the driver's connection (SQLAlchemy 2, and 1.4
    since 1.4.24). On the first connect SQLAlchemy 1.4 hands the dialect a
    ``Connection`` over the raw DB-API connection itself, with no proxy.
    """
    from trinity_dbapi.dbapi.connection import Connection

    proxied = connection.connection
    if isinstance(proxied, Connection):
        return proxied
    driver: Connection = proxied.driver_connection
    return driver
