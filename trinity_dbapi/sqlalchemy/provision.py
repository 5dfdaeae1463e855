"""Provisioning hooks of SQLAlchemy's compliance suite for the trinity dialect.

SQLAlchemy loads this module by name (``<dialect package>.provision``) when
the suite starts; it is not used otherwise. A lakehouse needs no server or
database to create: the URL's folder is created on first connect, and the
two extra schemas the suite uses are namespaces created here.

Imports from sqlalchemy/: compat.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.testing.provision import post_configure_engine, temp_table_keyword_args

from trinity_dbapi.sqlalchemy.compat import driver_connection

#: Schemas (namespaces) the suite's cross-schema tests expect to exist.
TEST_SCHEMAS = ("test_schema", "test_schema_2")


@post_configure_engine.for_db("trinity")
def _create_test_schemas(url: Any, engine: Any, follower_ident: Any) -> None:
    with engine.connect() as connection:
        dbapi_connection = driver_connection(connection)
        dbapi_connection.autocommit = True
        cursor = dbapi_connection.cursor()
        for name in TEST_SCHEMAS:
            cursor.execute(f"CREATE NAMESPACE IF NOT EXISTS {name}")
        cursor.close()
        dbapi_connection.autocommit = False


@temp_table_keyword_args.for_db("trinity")
def _temp_table_keyword_args(cfg: Any, eng: Any) -> dict[str, Any]:
    # Closed in requirements.py (no temporary tables); the hook must exist.
    return {}
