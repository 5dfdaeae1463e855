"""Reflection: what ``inspect(engine)`` and ``Table(autoload_with=...)`` read back."""

from __future__ import annotations

import datetime
import decimal
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc
from sqlalchemy.schema import CreateTable

from tests.sqlalchemy.helpers import INSPECTOR_2, has_schema
from trinity_dbapi.sqlalchemy import FIXED, MAP, STRUCT, lookups
from trinity_dbapi.sqlalchemy.compat import DOUBLE

#: SQLAlchemy 2's generic double; 1.4 has none, and its Float() renders the same FLOAT8.
DOUBLE_GENERIC: Any = getattr(sa, "Double", sa.Float)
#: SQLAlchemy 2's generic UUID (``CHAR(32)`` without a native one); 1.4 has no generic UUID.
HAS_UUID = hasattr(sa, "Uuid")

#: (name, type given to Column, type reflected, nullable, comment) of every column.
COLUMNS: list[tuple[str, Any, Any, bool, str | None]] = [
    ("id", sa.BigInteger, sa.BIGINT(), False, "the key"),
    ("day", sa.Date, sa.DATE(), False, None),
    ("name", sa.String(20), sa.VARCHAR(20), True, "who it is"),
    ("small", sa.SmallInteger, sa.SMALLINT(), True, None),
    ("int", sa.Integer, sa.INTEGER(), True, None),
    ("float", sa.Float, DOUBLE(), True, None),
    ("float10", sa.Float(precision=10), sa.REAL(), True, None),
    ("real", sa.REAL, sa.REAL(), True, None),
    ("double", DOUBLE_GENERIC, DOUBLE(), True, None),
    ("money", sa.Numeric(10, 2), sa.DECIMAL(10, 2), True, "two decimals"),
    ("numeric", sa.Numeric(), sa.DECIMAL(38, 10), True, None),
    ("string", sa.String(), sa.VARCHAR(), True, None),
    ("text", sa.Text, sa.VARCHAR(), True, None),
    ("unicode", sa.Unicode, sa.VARCHAR(), True, None),
    ("code", sa.CHAR(3), sa.CHAR(3), True, None),
    ("flag", sa.Boolean, sa.BOOLEAN(), True, None),
    ("time", sa.Time, sa.TIME(), True, None),
    ("stamp", sa.DateTime, sa.TIMESTAMP(), True, None),
    ("stamptz", sa.DateTime(timezone=True), sa.TIMESTAMP(timezone=True), True, None),
    ("blob", sa.LargeBinary, sa.LargeBinary(), True, None),
    ("bytes8", sa.VARBINARY(8), sa.VARBINARY(8), True, None),
    *([("uuid", sa.Uuid, sa.CHAR(32), True, None)] if HAS_UUID else []),
    ("tags", sa.ARRAY(sa.Integer), sa.ARRAY(sa.INTEGER()), True, None),
    (
        "point",
        STRUCT(("x", DOUBLE_GENERIC), ("label", sa.String(5))),
        STRUCT(("x", DOUBLE()), ("label", sa.VARCHAR(5))),
        True,
        None,
    ),
    ("attrs", MAP(sa.String, sa.Integer), MAP(sa.VARCHAR(), sa.INTEGER()), True, None),
    ("digest", FIXED(16), FIXED(16), True, None),
]

#: The column lines of ``CREATE TABLE everything``.
COLUMN_DDL = [
    "id INT8 NOT NULL COMMENT 'the key'",
    "day DATE NOT NULL",
    "name VARCHAR(20) COMMENT 'who it is'",
    "small INT2",
    "int INT4",
    "float FLOAT8",
    "float10 FLOAT4",
    "real FLOAT4",
    "double FLOAT8",
    "money DECIMAL(10, 2) COMMENT 'two decimals'",
    "numeric DECIMAL(38, 10)",
    "string VARCHAR",
    "text VARCHAR",
    "unicode VARCHAR",
    "code CHAR(3)",
    "flag BOOLEAN",
    "time TIME(6)",
    "stamp TIMESTAMP(6)",
    "stamptz TIMESTAMPTZ(6)",
    "blob BINARY",
    "bytes8 BINARY(8)",
    *(["uuid CHAR(32)"] if HAS_UUID else []),
    "tags LIST<INT4>",
    "point STRUCT<x: FLOAT8, label: VARCHAR(5)>",
    "attrs MAP<VARCHAR, INT4>",
    "digest FIXED(16)",
    "PRIMARY KEY (id)",
]
#: ``CREATE TABLE`` of ``everything``, as created and as reflected.
EXPECTED_DDL = (
    "\nCREATE TABLE ns.everything (\n\t"
    + ", \n\t".join(COLUMN_DDL)
    + "\n)\nPARTITIONED BY (day)\nCOMMENT 'every type there is'\nWITH (owner = 'ana')\n\n"
)


def everything(metadata: sa.MetaData) -> sa.Table:
    table = sa.Table(
        "everything",
        metadata,
        *(
            sa.Column(name, type_, primary_key=name == "id", nullable=nullable, comment=comment)
            for name, type_, _, nullable, comment in COLUMNS
        ),
        schema="ns",
        comment="every type there is",
        trinity_partitioned_by=["day"],
        trinity_properties={"owner": "ana"},
    )
    sa.Index("ix_name", table.c.name)
    return table


def described(columns: list[Any]) -> list[tuple[Any, ...]]:
    """Reflected columns as comparable tuples (types compare by identity, so by repr)."""
    return [
        (c["name"], repr(c["type"]), c["nullable"], c["default"], c["comment"]) for c in columns
    ]


@pytest.fixture
def original(engine: sa.Engine) -> sa.Table:
    """``ns.everything`` (every type, comments, a key, partitioning, an index), created."""
    metadata = sa.MetaData()
    table = everything(metadata)
    metadata.create_all(engine)
    return table


@pytest.fixture
def inspector(engine: sa.Engine, original: sa.Table) -> sa.Inspector:
    return sa.inspect(engine)


def test_created_ddl(engine: sa.Engine, original: sa.Table) -> None:
    assert str(CreateTable(original).compile(engine)) == EXPECTED_DDL


def test_schemas(inspector: sa.Inspector) -> None:
    assert inspector.get_schema_names() == ["information_schema", "ns", "system"]
    assert has_schema(inspector, "ns") is True
    assert has_schema(inspector, "nope") is False
    assert has_schema(inspector, "system") is True
    assert has_schema(inspector, "information_schema") is True


def test_table_and_view_names(inspector: sa.Inspector) -> None:
    assert inspector.get_table_names("ns") == ["everything"]
    assert inspector.get_view_names("ns") == []
    assert inspector.get_sequence_names("ns") == []


def test_has_table(inspector: sa.Inspector) -> None:
    assert inspector.has_table("everything", "ns") is True
    assert inspector.has_table("nothing", "ns") is False
    assert inspector.has_table("everything", "elsewhere") is False
    assert inspector.has_table("everything") is False  # not in the default namespace
    assert inspector.has_table("tables", "system") is True
    assert inspector.has_table("nothing", "system") is False


def test_columns(inspector: sa.Inspector) -> None:
    assert described(inspector.get_columns("everything", "ns")) == [
        (name, repr(reflected), nullable, None, comment)
        for name, _, reflected, nullable, comment in COLUMNS
    ]


def test_reflected_types_are_the_dialect_types(inspector: sa.Inspector) -> None:
    columns = {c["name"]: c["type"] for c in inspector.get_columns("everything", "ns")}
    assert type(columns["point"]) is STRUCT
    assert [(name, repr(type_)) for name, type_ in columns["point"].fields] == [
        ("x", "DOUBLE()"),
        ("label", "VARCHAR(length=5)"),
    ]
    assert type(columns["attrs"]) is MAP
    assert (repr(columns["attrs"].key_type), repr(columns["attrs"].value_type)) == (
        "VARCHAR()",
        "INTEGER()",
    )
    assert type(columns["digest"]) is FIXED and columns["digest"].length == 16
    assert type(columns["tags"]) is sa.ARRAY and repr(columns["tags"].item_type) == "INTEGER()"
    assert columns["point"].python_type is dict and columns["attrs"].python_type is dict


def test_constraints_and_indexes(inspector: sa.Inspector) -> None:
    assert inspector.get_pk_constraint("everything", "ns") == {
        "constrained_columns": ["id"],
        "name": None,
    }
    assert inspector.get_foreign_keys("everything", "ns") == []
    assert inspector.get_unique_constraints("everything", "ns") == []
    assert inspector.get_check_constraints("everything", "ns") == []
    assert inspector.get_indexes("everything", "ns") == [
        {"name": "ix_name", "column_names": ["name"], "unique": False, "dialect_options": {}}
    ]


def test_comment_and_options(inspector: sa.Inspector) -> None:
    assert inspector.get_table_comment("everything", "ns") == {"text": "every type there is"}
    assert inspector.get_table_options("everything", "ns") == {
        "trinity_partitioned_by": ["day"],
        "trinity_properties": {"owner": "ana"},
    }


def test_table_without_extras(engine: sa.Engine, inspector: sa.Inspector) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ns.plain (a INT4)")
    inspector.info_cache.clear()  # Inspector.clear_cache() on SQLAlchemy 2
    assert inspector.get_table_names("ns") == ["everything", "plain"]
    assert inspector.get_pk_constraint("plain", "ns") == {"constrained_columns": [], "name": None}
    assert inspector.get_indexes("plain", "ns") == []
    assert inspector.get_table_comment("plain", "ns") == {"text": None}
    assert inspector.get_table_options("plain", "ns") == {}


def test_the_inspector_caches(
    engine: sa.Engine, original: sa.Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    inspector = sa.inspect(engine)
    reads: list[str] = []
    real_read = lookups.read

    def counted(connection: Any, work: Any, what: str) -> Any:
        reads.append(what)
        return real_read(connection, work, what)

    monkeypatch.setattr(lookups, "read", counted)
    first = inspector.get_columns("everything", "ns")
    assert reads == ["reflect table ns.everything"]
    assert inspector.get_columns("everything", "ns") == first
    assert inspector.get_pk_constraint("everything", "ns")["constrained_columns"] == ["id"]
    assert len(reads) == 1  # the definition read for get_columns serves every method
    assert inspector.has_table("everything", "ns") is True
    assert len(reads) == 2  # has_table is a key lookup of its own
    assert inspector.has_table("everything", "ns") is True
    # SQLAlchemy 1.4's Inspector.has_table passes no cache: the key is looked up again.
    assert len(reads) == (2 if INSPECTOR_2 else 3)
    sa.inspect(engine).get_columns("everything", "ns")  # a new inspector asks again
    assert len(reads) == (3 if INSPECTOR_2 else 4)


@pytest.mark.parametrize(
    "method",
    [
        "get_columns",
        "get_pk_constraint",
        "get_foreign_keys",
        "get_indexes",
        "get_unique_constraints",
        "get_table_comment",
        "get_table_options",
    ],
)
@pytest.mark.parametrize(("schema", "name"), [("ns", "nothing"), ("elsewhere", "everything")])
def test_missing_tables_raise_no_such_table(
    inspector: sa.Inspector, method: str, schema: str, name: str
) -> None:
    with pytest.raises(exc.NoSuchTableError, match=rf"^{schema}\.{name}$"):
        getattr(inspector, method)(name, schema)


def test_missing_catalog_table_raises_no_such_table(inspector: sa.Inspector) -> None:
    with pytest.raises(exc.NoSuchTableError, match=r"^system\.nothing$"):
        inspector.get_columns("nothing", "system")
    with pytest.raises(exc.NoSuchTableError, match=r"^system\.nothing$"):
        inspector.get_pk_constraint("nothing", "system")


def test_table_names_of_a_missing_schema(inspector: sa.Inspector) -> None:
    # As in PostgreSQL: a schema that does not exist has no tables.
    assert inspector.get_table_names("elsewhere") == []


def test_autoload_of_a_missing_table(engine: sa.Engine) -> None:
    with pytest.raises(exc.NoSuchTableError, match="nothing"):
        sa.Table("nothing", sa.MetaData(), schema="ns", autoload_with=engine)


def test_autoload_round_trips_the_ddl(engine: sa.Engine, original: sa.Table) -> None:
    reflected = sa.Table("everything", sa.MetaData(), schema="ns", autoload_with=engine)
    assert str(CreateTable(reflected).compile(engine)) == EXPECTED_DDL
    assert reflected.comment == "every type there is"
    assert reflected.dialect_options["trinity"]["partitioned_by"] == ["day"]
    assert reflected.dialect_options["trinity"]["properties"] == {"owner": "ana"}
    assert [(index.name, [c.name for c in index.columns]) for index in reflected.indexes] == [
        ("ix_name", ["name"])
    ]
    assert [c.name for c in reflected.primary_key] == ["id"]


def test_reflected_table_can_be_created_again(engine: sa.Engine, original: sa.Table) -> None:
    metadata = sa.MetaData()
    reflected = sa.Table("everything", metadata, schema="ns", autoload_with=engine)
    copy = reflected.to_metadata(sa.MetaData(), schema="copy")
    with engine.begin() as conn:
        conn.execute(sa.schema.CreateSchema("copy"))
    copy.metadata.create_all(engine)
    inspector = sa.inspect(engine)
    assert described(inspector.get_columns("everything", "copy")) == described(
        inspector.get_columns("everything", "ns")
    )
    assert inspector.get_indexes("everything", "copy") == inspector.get_indexes("everything", "ns")
    assert inspector.get_table_options("everything", "copy") == {
        "trinity_partitioned_by": ["day"],
        "trinity_properties": {"owner": "ana"},
    }


def test_metadata_reflect_of_a_schema(engine: sa.Engine, original: sa.Table) -> None:
    metadata = sa.MetaData()
    metadata.reflect(engine, schema="ns")
    assert sorted(metadata.tables) == ["ns.everything"]
    assert [c.name for c in metadata.tables["ns.everything"].columns] == [c[0] for c in COLUMNS]


def test_catalog_tables(engine: sa.Engine) -> None:
    inspector = sa.inspect(engine)
    assert inspector.get_table_names("system") == [
        "columns",
        "data_files",
        "namespaces",
        "refs",
        "tables",
        "versions",
    ]
    columns = inspector.get_columns("tables", "system")
    assert [(c["name"], repr(c["type"]), c["nullable"]) for c in columns] == [
        ("namespace_name", "VARCHAR()", False),
        ("table_name", "VARCHAR()", False),
        ("table_type", "VARCHAR()", False),
        ("table_format", "VARCHAR()", False),
        ("comment", "VARCHAR()", True),
        ("column_count", "INTEGER()", False),
        ("primary_key", "ARRAY(VARCHAR())", False),
        ("partition_columns", "ARRAY(VARCHAR())", False),
        ("properties", "MAP(VARCHAR(), VARCHAR())", True),
        ("format_properties", "MAP(VARCHAR(), VARCHAR())", True),
    ]
    assert inspector.get_pk_constraint("tables", "system") == {
        "constrained_columns": [],
        "name": None,
    }


def test_catalog_table_autoload_and_query(engine: sa.Engine, original: sa.Table) -> None:
    tables = sa.Table("tables", sa.MetaData(), schema="system", autoload_with=engine)
    query = sa.select(tables.c.table_name, tables.c.primary_key, tables.c.partition_columns)
    with engine.connect() as conn:
        assert conn.execute(query.where(tables.c.namespace_name == "ns")).all() == [
            ("everything", ["id"], ["day"])
        ]


def test_default_schema_with_no_tables_yet(tmp_path: Path) -> None:
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}")
    assert sa.inspect(engine).default_schema_name == "default"
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (a INT4)")
    assert sa.inspect(engine).get_table_names() == ["t"]
    assert sa.inspect(engine).get_schema_names() == ["default", "information_schema", "system"]
    engine.dispose()


def test_fresh_lakehouse_reflects_no_tables(tmp_path: Path) -> None:
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}")
    try:
        assert sa.inspect(engine).get_table_names() == []
        metadata = sa.MetaData()
        metadata.reflect(engine)
        assert metadata.tables == {}
    finally:
        engine.dispose()


# -- values of every type ------------------------------------------------------------------

#: A value of each column that can be bound as a parameter.
VALUES: dict[str, Any] = {
    "id": 1,
    "day": datetime.date(2024, 2, 29),
    "name": "ana",
    "small": -3,
    "int": 70_000,
    "float": 1.25,
    "float10": 0.5,
    "real": 2.5,
    "double": 1e300,
    "money": decimal.Decimal("12.34"),
    "numeric": decimal.Decimal("1.0000000001"),
    "string": "s",
    "text": "t" * 1000,
    "unicode": "ünï ✓",
    "code": "abc",
    "flag": True,
    "time": datetime.time(1, 2, 3, 456789),
    "stamp": datetime.datetime(2024, 1, 2, 3, 4, 5, 678901),
    "stamptz": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
    "blob": b"\x00\xff" * 10,
    "bytes8": b"abc",
    "tags": [1, None, 3],
    "digest": bytes(range(16)),
}
if HAS_UUID:
    VALUES["uuid"] = uuid.UUID("12345678-1234-5678-1234-567812345678")


def test_values_round_trip(engine: sa.Engine, original: sa.Table) -> None:
    with engine.begin() as conn:
        conn.execute(original.insert(), VALUES)
        conn.execute(original.insert(), {"id": 2, "day": datetime.date(2024, 3, 1)})
    with engine.connect() as conn:
        stored = conn.execute(sa.select(original).order_by(original.c.id)).mappings().all()
        by_uuid = (
            conn.execute(sa.select(original.c.id).where(original.c.uuid == VALUES["uuid"])).all()
            if HAS_UUID
            else [(1,)]
        )
    assert {name: stored[0][name] for name in VALUES} == VALUES
    assert stored[0]["point"] is None and stored[0]["attrs"] is None
    assert dict(stored[1]) == {name: None for name, *_ in COLUMNS} | {
        "id": 2,
        "day": datetime.date(2024, 3, 1),
    }
    assert by_uuid == [(1,)]
    if HAS_UUID:
        assert type(stored[0]["uuid"]) is uuid.UUID


def test_struct_values_read_as_dicts(engine: sa.Engine, original: sa.Table) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO ns.everything (id, day, point) "
            "VALUES (1, DATE '2024-01-01', {'x': 1.5, 'label': 'p'})"
        )
    with engine.connect() as conn:
        assert conn.execute(sa.select(original.c.point)).all() == [({"x": 1.5, "label": "p"},)]


def test_map_values_read_as_dicts(engine: sa.Engine, original: sa.Table) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO ns.everything (id, day, attrs) "
            "VALUES (1, DATE '2024-01-01', MAP(['a', 'b'], [1, 2]))"
        )
    with engine.connect() as conn:
        assert conn.execute(sa.select(original.c.attrs)).all() == [({"a": 1, "b": 2},)]


def test_struct_and_map_values_bind_as_dicts(engine: sa.Engine, original: sa.Table) -> None:
    with engine.begin() as conn:
        conn.execute(
            original.insert(),
            {
                "id": 1,
                "day": datetime.date(2024, 1, 1),
                "point": {"x": 1.5, "label": "p"},
                "attrs": {"a": 1},
            },
        )
    with engine.connect() as conn:
        assert conn.execute(sa.select(original.c.point)).all() == [({"x": 1.5, "label": "p"},)]
