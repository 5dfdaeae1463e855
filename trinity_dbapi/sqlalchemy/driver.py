"""The DB-API side of the SQLAlchemy dialect: URLs, connecting, isolation levels.

URL forms (``docs/sqlalchemy.md``): everything after ``trinity:///`` is the
lakehouse location that :func:`trinity_dbapi.connect` takes:

* ``trinity:///relative/path`` and ``trinity:////absolute/path``: local folders;
* ``trinity:///s3://bucket/prefix``, ``trinity:///memory://name`` or any
  fsspec URL: remote lakehouses.

Query parameters: ``storage.<option>=value`` go to the fsspec file system
(``storage_options``; ``true`` / ``false`` / numbers / JSON objects are
decoded, other values stay text); ``autocommit``, ``read_only``, ``create``,
``isolation_level`` and ``namespace`` are :func:`~trinity_dbapi.connect`
options. ``create_engine(..., connect_args={...})`` adds or overrides any of
them, including a whole ``storage_options`` dict.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import exc

from trinity_dbapi.errors import InterfaceError
from trinity_dbapi.sqlalchemy.base import TrinityDialect

#: ``connect()`` options a URL query may carry, with their value parsers.
_BOOLEAN_OPTIONS = ("autocommit", "read_only", "create")
_TEXT_OPTIONS = ("isolation_level", "namespace")
_STORAGE_PREFIX = "storage."


def _boolean(name: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise exc.ArgumentError(f"URL option {name}={value!r} must be true or false")


def _storage_value(value: str) -> Any:
    """A storage option from a URL: JSON when it reads as JSON, else the text itself.

    Credentials and endpoints are text; flags (``true``), numbers and nested
    option dicts (``client_kwargs={...}``) are JSON. Text that would read as
    a JSON number is given as a JSON string: ``storage.key="123"``.
    """
    try:
        return json.loads(value)
    except ValueError:
        return value


class TrinityDialect_trinity_dbapi(TrinityDialect):
    """``trinity://`` (and ``trinity+trinity_dbapi://``) through :mod:`trinity_dbapi`."""

    driver = "trinity_dbapi"
    supports_statement_cache = True

    @classmethod
    def import_dbapi(cls) -> Any:
        import trinity_dbapi

        return trinity_dbapi

    def create_connect_args(self, url: Any) -> tuple[list[Any], dict[str, Any]]:
        if url.host or url.username or url.password or url.port:
            raise exc.ArgumentError(
                f"trinity URL {url.render_as_string(hide_password=True)!r} has a host part; "
                "the lakehouse location follows 'trinity:///': trinity:////abs/path, "
                "trinity:///relative/path or trinity:///s3://bucket/prefix"
            )
        location = url.database
        if not location:
            raise exc.ArgumentError(
                "a trinity URL needs the lakehouse location after 'trinity:///', e.g. "
                "trinity:////abs/path or trinity:///s3://bucket/prefix"
            )
        options: dict[str, Any] = {}
        storage: dict[str, Any] = {}
        for name, raw in url.query.items():
            value = raw[-1] if isinstance(raw, tuple) else raw
            if name.startswith(_STORAGE_PREFIX) and len(name) > len(_STORAGE_PREFIX):
                storage[name[len(_STORAGE_PREFIX) :]] = _storage_value(value)
            elif name in _BOOLEAN_OPTIONS:
                options[name] = _boolean(name, value)
            elif name in _TEXT_OPTIONS:
                options[name] = value
            else:
                known = ", ".join((*_BOOLEAN_OPTIONS, *_TEXT_OPTIONS, "storage.<option>"))
                raise exc.ArgumentError(
                    f"unknown trinity URL option {name!r}; the options are {known}"
                )
        if storage:
            options["storage_options"] = storage
        return [location], options

    # -- isolation levels -----------------------------------------------------------

    # SNAPSHOT is outside SQLAlchemy's literal type of level names: typed Any.
    def get_isolation_level_values(self, dbapi_conn: Any) -> Any:
        return ["AUTOCOMMIT", "SERIALIZABLE", "SNAPSHOT"]

    def get_isolation_level(self, dbapi_connection: Any) -> Any:
        if dbapi_connection.autocommit:
            return "AUTOCOMMIT"
        # The driver names it "SNAPSHOT ISOLATION"; SQLAlchemy's name is the first word.
        return str(dbapi_connection.isolation_level).split()[0]

    def set_isolation_level(self, dbapi_connection: Any, level: str) -> None:
        if level == "AUTOCOMMIT":
            dbapi_connection.autocommit = True
            return
        dbapi_connection.autocommit = False
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"SET TRANSACTION ISOLATION LEVEL {level}")
        finally:
            cursor.close()

    def detect_autocommit_setting(self, dbapi_conn: Any) -> bool:
        return bool(dbapi_conn.autocommit)

    def do_ping(self, dbapi_connection: Any) -> bool:
        # Nothing to lose: a lakehouse has no server; a closed connection raises.
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
        finally:
            cursor.close()

    def is_disconnect(self, e: Exception, connection: Any, cursor: Any) -> bool:
        # InterfaceError is imported with the module: this runs while pools are
        # finalized at interpreter exit, when imports fail.
        return isinstance(e, InterfaceError) and "closed" in str(e)

    def _get_server_version_info(self, connection: Any) -> tuple[int, ...]:
        import trinity_dbapi

        return tuple(
            int(part) for part in trinity_dbapi.__version__.split(".")[:3] if part.isdigit()
        )


dialect = TrinityDialect_trinity_dbapi
