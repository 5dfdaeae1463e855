"""The DB-API side of the SQLAlchemy dialect: URLs, connecting, isolation levels.

URL forms (``docs/sqlalchemy.md``): everything after ``trinity:///`` is the
lakehouse location that :func:`trinity_dbapi.connect` takes:

* ``trinity:///relative/path`` and ``trinity:////absolute/path``: local folders;
* ``trinity:///s3://bucket/prefix``, ``trinity:///memory://name`` or any
  fsspec URL: remote lakehouses.

Query parameters: ``storage.<option>=value`` go to the fsspec file system
(``storage_options``; ``true`` / ``false`` / numbers / JSON objects are
decoded, other values stay text); ``autocommit``, ``read_only``, ``create``,
``isolation_level``, ``namespace``, ``author`` (who commits: system.versions.author),
``branch`` (the branch every connection reads and writes; reflection lists its tables),
``statement_timeout`` (seconds),
``version`` (a version number: read that version only, docs/recovery.md) and
``definition_cache_bytes`` (the bound of the connection's definition cache) are
:func:`~trinity_dbapi.connect` options. ``create_engine(..., connect_args={...})`` adds or overrides any of
them, including a whole ``storage_options`` dict.

Imports from sqlalchemy/: compat, dialect.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote_plus

from sqlalchemy import exc
from sqlalchemy.engine import URL

from trinity_dbapi.errors import InterfaceError
from trinity_dbapi.sqlalchemy.compat import DIALECT_SETS_ISOLATION_LEVEL
from trinity_dbapi.sqlalchemy.dialect import TrinityDialect

#: ``connect()`` options a URL query may carry, with their value parsers.
_BOOLEAN_OPTIONS = ("autocommit", "read_only", "create")
_TEXT_OPTIONS = ("isolation_level", "namespace", "author", "branch")
_SECONDS_OPTIONS = ("statement_timeout",)
_VERSION_OPTIONS = ("version",)
_BYTES_OPTIONS = ("definition_cache_bytes",)
_STORAGE_PREFIX = "storage."
#: The isolation levels SQLAlchemy may set, in its spelling.
ISOLATION_LEVELS = ("AUTOCOMMIT", "SERIALIZABLE", "SNAPSHOT")


def _boolean(name: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise exc.ArgumentError(f"URL option {name}={value!r} must be true or false")


def _seconds(name: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):  # NaN fails >= too
        raise exc.ArgumentError(
            f"URL option {name}={value!r} must be a number of seconds, 0 for no limit"
        )
    return seconds


def _version(name: str, value: str) -> int:
    if not value.isascii() or not value.isdigit() or len(value) > 10 or int(value) > 2**32 - 1:
        raise exc.ArgumentError(
            f"URL option {name}={value!r} must be a version number (0 to 4294967295)"
        )
    return int(value)


def _bytes(name: str, value: str) -> int:
    if not value.isascii() or not value.isdigit():
        raise exc.ArgumentError(
            f"URL option {name}={value!r} must be a whole number of bytes, 0 or more "
            "(0 disables the cache)"
        )
    return int(value)


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


def _is_secret_option(name: str) -> bool:
    from trinity_dbapi.storage.redact import is_secret_name

    return name.startswith(_STORAGE_PREFIX) and is_secret_name(name)


def _shown_value(name: str, value: str) -> str:
    """A query value as the hidden-password rendering shows it.

    A secret option's value is ``***``. A ``storage.*`` value that is a JSON
    object or list (``storage.client_kwargs={...}``) is shown re-encoded with
    the values of its secret keys masked, at any depth, as the storage
    treats them; any other value with the user info of its URLs hidden.
    """
    from trinity_dbapi.storage.redact import MASK, masked, redact_userinfo

    if _is_secret_option(name):
        return MASK
    if name.startswith(_STORAGE_PREFIX):
        parsed = _storage_value(value)
        if isinstance(parsed, (dict, list)):
            hidden = masked(parsed)
            if hidden != parsed:
                return json.dumps(hidden)
    return redact_userinfo(value)


class RedactingURL(URL):
    """A URL whose hidden-password rendering also hides secret ``storage.*`` values.

    A value is secret when its option's name says so (``storage.secret``,
    ``storage.token``, ``storage.account_key``, ``storage.connection_string``,
    ``storage.sas_token``, ...), and so is what a secret key holds inside a
    JSON value (``storage.client_kwargs={"credential": ...}``); the user info
    of URLs in other values (``storage.endpoint_url=http://user:pw@host``)
    and in the location is hidden too.
    """

    __slots__ = ()

    def render_as_string(self, hide_password: bool = True) -> str:
        if not hide_password:
            return URL.render_as_string(self, hide_password=False)
        from trinity_dbapi.storage.redact import redact_userinfo

        database = None if self.database is None else redact_userinfo(self.database)
        shown = URL.create(
            self.drivername, self.username, self.password, self.host, self.port, database
        ).render_as_string(hide_password=True)
        if not self.query:
            return shown
        items = []
        for name in sorted(self.query):
            raw = self.query[name]
            for value in raw if isinstance(raw, tuple) else (raw,):
                text = _shown_value(name, value)
                items.append(f"{quote_plus(name)}={quote_plus(text, safe='*')}")
        return f"{shown}?{'&'.join(items)}"

    def __repr__(self) -> str:
        return self.render_as_string()

    def __str__(self) -> str:
        # SQLAlchemy 2's str() hides the password; 1.4's shows it (and a
        # secret storage.* value would show on both without this).
        return self.render_as_string()


class TrinityDialect_trinity_dbapi(TrinityDialect):
    """``trinity://`` (and ``trinity+trinity_dbapi://``) through :mod:`trinity_dbapi`."""

    driver = "trinity_dbapi"
    supports_statement_cache = True

    # SQLAlchemy 2 calls import_dbapi() (found in this class's own namespace,
    # so its deprecation warning for dbapi() never fires); 1.4 calls dbapi(),
    # and 2.x then replaces it on the instance with the module it returned.
    @classmethod
    def import_dbapi(cls) -> Any:
        import trinity_dbapi

        return trinity_dbapi

    @classmethod
    def dbapi(cls) -> Any:  # type: ignore[override]
        """The DB-API module, under the name SQLAlchemy 1.4 calls."""
        return cls.import_dbapi()

    @classmethod
    def engine_created(cls, engine: Any) -> None:
        """Give the engine a URL whose repr hides secret ``storage.*`` values too.

        SQLAlchemy hides only the password part of a URL in ``repr(engine)``
        and ``repr(url)``; a secret in the query would show. The engine
        connects with the arguments already taken from the URL, so this
        changes what is shown, nothing else (``render_as_string(hide_password=False)``
        still renders everything).
        """
        engine.url = RedactingURL._make(engine.url)

    def create_connect_args(self, url: Any) -> tuple[list[Any], dict[str, Any]]:
        # User info is only ever an S3 key pair, "KEY:SECRET@" (see below).
        if url.host or url.port or (url.username is not None and url.password is None):
            raise exc.ArgumentError(
                f"trinity URL {RedactingURL._make(url).render_as_string()!r} has a host part; "
                "the lakehouse location follows 'trinity:///': trinity:////abs/path, "
                "trinity:///relative/path or trinity:///s3://bucket/prefix (an S3 key pair "
                "may come before it: trinity://KEY:SECRET@/s3://bucket/prefix)"
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
            elif name in _SECONDS_OPTIONS:
                options[name] = _seconds(name, value)
            elif name in _VERSION_OPTIONS:
                options[name] = _version(name, value)
            elif name in _BYTES_OPTIONS:
                options[name] = _bytes(name, value)
            else:
                known = ", ".join(
                    (
                        *_BOOLEAN_OPTIONS,
                        *_TEXT_OPTIONS,
                        *_SECONDS_OPTIONS,
                        *_VERSION_OPTIONS,
                        *_BYTES_OPTIONS,
                        "storage.<option>",
                    )
                )
                raise exc.ArgumentError(
                    f"unknown trinity URL option {name!r}; the options are {known}"
                )
        # trinity://KEY:SECRET@/s3://bucket/prefix: the password part, which
        # SQLAlchemy hides everywhere, carries the S3 key pair (s3fs's names).
        for part, option in ((url.username, "key"), (url.password, "secret")):
            if part:
                if option in storage:
                    raise exc.ArgumentError(
                        f"trinity URL {RedactingURL._make(url).render_as_string()!r} gives storage.{option} twice: in "
                        "its user info and in its query; keep one"
                    )
                storage[option] = part
        if storage:
            options["storage_options"] = storage
        return [location], options

    # -- isolation levels -----------------------------------------------------------

    # SNAPSHOT is outside SQLAlchemy's literal type of level names: typed Any.
    def __init__(self, isolation_level: Any = None, **kwargs: Any) -> None:
        if DIALECT_SETS_ISOLATION_LEVEL:  # SQLAlchemy 2: its on_connect sets the level
            super().__init__(isolation_level=isolation_level, **kwargs)
            self._connect_isolation_level = None
        else:  # SQLAlchemy 1.4: the dialect's on_connect does, as 1.4's own dialects
            super().__init__(**kwargs)
            self._connect_isolation_level = isolation_level

    def on_connect(self) -> Any:
        level = self._connect_isolation_level
        if level is None:
            return None

        def set_level(dbapi_connection: Any) -> None:
            self.set_isolation_level(dbapi_connection, level)

        return set_level

    def get_isolation_level_values(self, dbapi_conn: Any) -> Any:
        return list(ISOLATION_LEVELS)

    def get_isolation_level(self, dbapi_connection: Any) -> Any:
        if dbapi_connection.autocommit:
            return "AUTOCOMMIT"
        # The driver names it "SNAPSHOT ISOLATION"; SQLAlchemy's name is the first word.
        return str(dbapi_connection.isolation_level).split()[0]

    def set_isolation_level(self, dbapi_connection: Any, level: str) -> None:
        level = level.replace("_", " ").upper()  # as SQLAlchemy 2 spells it before calling
        # SQLAlchemy 1.4 may pass the pool's proxy (its reset_isolation_level does):
        # an attribute set on the proxy would not reach the driver's connection.
        dbapi_connection = getattr(dbapi_connection, "dbapi_connection", dbapi_connection)
        if level not in ISOLATION_LEVELS:
            # SQLAlchemy 2 checks the name against get_isolation_level_values()
            # before calling here; 1.4 does not, so the same message is given here.
            raise exc.ArgumentError(
                f"Invalid value {level!r} for isolation_level. Valid isolation levels "
                f"for {self.name!r} are {', '.join(ISOLATION_LEVELS)}"
            )
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
