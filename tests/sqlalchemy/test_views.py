"""SQLAlchemy and views: reflection, has_table, autoload, MetaData.reflect, DDL constructs.

Runs on both SQLAlchemy lines (the 1.4 CI leg runs ``tests/sqlalchemy``);
what only 2.1 has (``CreateView`` / ``DropView``) is found by feature detection.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy import exc

from tests.sqlalchemy.helpers import rows

NS = "ns"  # the namespace the ``engine`` fixture creates


def _make_view(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE {NS}.t (a INT8 NOT NULL, b VARCHAR COMMENT 'bee')")
        conn.exec_driver_sql(f"CREATE VIEW {NS}.v (k, s) COMMENT 'big' AS SELECT a, b FROM {NS}.t")
        conn.exec_driver_sql(f"INSERT INTO {NS}.t VALUES (1, 'x'), (2, 'y')")


def test_view_reflection(engine: sa.Engine) -> None:
    _make_view(engine)
    inspector = sa.inspect(engine)
    assert inspector.get_view_names(NS) == ["v"]
    assert inspector.get_view_names("nowhere") == []
    assert inspector.get_table_names(NS) == ["t"]  # views are listed apart
    assert inspector.get_view_definition("v", NS) == f"CREATE VIEW v AS SELECT a, b FROM {NS}.t;"
    columns = inspector.get_columns("v", NS)
    assert [(c["name"], str(c["type"]), c["nullable"]) for c in columns] == [
        ("k", "BIGINT", True),
        ("s", "VARCHAR", True),
    ]
    assert inspector.get_table_comment("v", NS) == {"text": "big"}
    assert inspector.get_pk_constraint("v", NS) == {"constrained_columns": [], "name": None}
    assert inspector.get_indexes("v", NS) == []
    assert inspector.has_table("v", NS)  # as SQLAlchemy 2 asks: views too
    assert not inspector.has_table("nope", NS)
    assert not inspector.has_table("v", "nowhere")


def test_view_definition_of_a_table_or_nothing_raises(engine: sa.Engine) -> None:
    _make_view(engine)
    inspector = sa.inspect(engine)
    for name in ("t", "nope"):
        with pytest.raises(exc.NoSuchTableError, match=f"{NS}.{name}"):
            inspector.get_view_definition(name, NS)
    # The catalog namespaces hold catalog tables, no views.
    assert inspector.get_view_names("information_schema") == []
    assert inspector.get_view_names("system") == []


def test_table_autoloaded_from_a_view_selects_its_rows(engine: sa.Engine) -> None:
    _make_view(engine)
    view = sa.Table("v", sa.MetaData(), schema=NS, autoload_with=engine)
    assert [c.name for c in view.columns] == ["k", "s"]
    assert view.comment == "big"
    with engine.connect() as conn:
        got = conn.execute(sa.select(view.c.k, view.c.s).order_by(view.c.k)).fetchall()
    assert [tuple(r) for r in got] == [(1, "x"), (2, "y")]


def test_metadata_reflect_takes_views_when_asked(engine: sa.Engine) -> None:
    _make_view(engine)
    tables_only = sa.MetaData()
    tables_only.reflect(engine, schema=NS)
    assert sorted(tables_only.tables) == [f"{NS}.t"]
    with_views = sa.MetaData()
    with_views.reflect(engine, schema=NS, views=True)
    assert sorted(with_views.tables) == [f"{NS}.t", f"{NS}.v"]
    view = with_views.tables[f"{NS}.v"]
    assert [(c.name, c.nullable) for c in view.columns] == [("k", True), ("s", True)]
    with engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(view)).scalar_one() == 2


def test_dropped_view_leaves_reflection(engine: sa.Engine) -> None:
    _make_view(engine)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"DROP VIEW {NS}.v")
        conn.exec_driver_sql(f"DROP VIEW IF EXISTS {NS}.v")
    inspector = sa.inspect(engine)
    assert inspector.get_view_names(NS) == []
    assert not inspector.has_table("v", NS)
    with pytest.raises(exc.NoSuchTableError):
        inspector.get_columns("v", NS)
    assert rows(engine, f"SELECT count(*) FROM {NS}.t") == [(2,)]


@pytest.mark.skipif(
    not hasattr(sa.schema, "CreateView"), reason="CreateView and DropView are SQLAlchemy 2.1's"
)
def test_create_view_and_drop_view_constructs(engine: sa.Engine) -> None:
    from sqlalchemy.schema import CreateView, DropView

    _make_view(engine)
    source = sa.Table("t", sa.MetaData(), schema=NS, autoload_with=engine)
    metadata = sa.MetaData()
    big = CreateView(
        sa.select(source.c.a.label("n")).where(source.c.a > 1), "big", schema=NS, metadata=metadata
    )
    metadata.create_all(engine)
    inspector = sa.inspect(engine)
    assert inspector.get_view_names(NS) == ["big", "v"]
    assert [c["name"] for c in inspector.get_columns("big", NS)] == ["n"]
    assert rows(engine, f"SELECT n FROM {NS}.big") == [(2,)]
    replace = CreateView(sa.select(source.c.a.label("n")), "big", schema=NS, or_replace=True)
    with engine.begin() as conn:
        conn.execute(replace)
    assert rows(engine, f"SELECT n FROM {NS}.big ORDER BY n") == [(1,), (2,)]
    metadata.drop_all(engine)
    assert sa.inspect(engine).get_view_names(NS) == ["v"]
    with engine.begin() as conn:  # IF EXISTS: a missing view is no error
        conn.execute(DropView(big.table, if_exists=True))
    assert sa.inspect(engine).get_view_names(NS) == ["v"]


def test_superset_lists_views(engine: sa.Engine) -> None:
    from trinity_dbapi.superset.spec import TrinityEngineSpec as Spec

    _make_view(engine)
    inspector = sa.inspect(engine)
    assert Spec.get_view_names(None, inspector, NS) == {"v"}  # type: ignore[arg-type]
    assert Spec.get_table_names(None, inspector, NS) == {"t"}  # type: ignore[arg-type]
