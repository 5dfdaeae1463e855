"""Apache Superset support: :class:`TrinityEngineSpec`, the ``trinity`` database engine spec.

Superset describes each kind of database with an engine spec: a class of SQL
snippets, flags and hooks that it reads while listing tables, running SQL Lab
and building chart queries. It finds this one through the package's entry
point::

    [options.entry_points]
    superset.db_engine_specs =
        trinity = trinity_dbapi.superset:TrinityEngineSpec

and uses it for every database whose SQLAlchemy URL is a ``trinity://`` URL
(the dialect of :mod:`trinity_dbapi.sqlalchemy`). docs/superset.md is the
manual. The modules:

* :mod:`~trinity_dbapi.superset.spec`: the class, every hook with Superset
  6.1's signature;
* :mod:`~trinity_dbapi.superset.grains`: time grains, epoch conversions and
  filter literals (DuckDB SQL);
* :mod:`~trinity_dbapi.superset.column_types`: type names as Superset's
  SQLAlchemy and generic types (``is_dttm``);
* :mod:`~trinity_dbapi.superset.partitions`: partition columns and the latest
  partition of a ``PARTITIONED BY`` table;
* :mod:`~trinity_dbapi.superset.cancel`: the registry that lets SQL Lab's
  *Stop* interrupt a running statement;
* :mod:`~trinity_dbapi.superset.dialect`: the sqlglot dialect Superset parses
  with: the trinity dialect, which also takes bare clauses (SQL metrics,
  filters);
* :mod:`~trinity_dbapi.superset.host`: what comes from Superset when it is
  importable, and the stand-ins when it is not.

Importing this package inside Superset's environment also registers that
dialect with Superset's SQL parser
(:func:`~trinity_dbapi.superset.host.register_sqlglot_dialect`), so SQL Lab
parses time travel, ``SHOW``, ``DESCRIBE`` and ``CALL``, and
``allow_dml=False`` recognises the lakehouse's DDL.

Superset is not a dependency of the package, and nothing but this package
imports it; ``import trinity_dbapi`` never imports this package.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``cancel`` (the query registry behind Stop), ``dialect`` (the sqlglot
   dialect Superset parses with), ``grains``, ``partitions``
2. ``host`` (what it takes from Superset when installed)
3. ``column_types``
4. ``spec`` (:class:`TrinityEngineSpec`, the class Superset loads)
"""

from __future__ import annotations

from trinity_dbapi.superset.grains import TIME_GRAIN_EXPRESSIONS
from trinity_dbapi.superset.host import SUPERSET_INSTALLED, register_sqlglot_dialect
from trinity_dbapi.superset.spec import TrinityEngineSpec

__all__ = [
    "SQLGLOT_DIALECT_REGISTERED",
    "SUPERSET_INSTALLED",
    "TIME_GRAIN_EXPRESSIONS",
    "TrinityEngineSpec",
]

#: Whether Superset's SQL parser was there to register the trinity dialect with.
SQLGLOT_DIALECT_REGISTERED: bool = register_sqlglot_dialect()
