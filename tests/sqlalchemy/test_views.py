"""SQLAlchemy reflection of views: names, definitions, columns, has_table."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa


def test_view_reflection(tmp_path: Path) -> None:
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE NAMESPACE ns")
        conn.exec_driver_sql("CREATE TABLE ns.t (a INT8 NOT NULL, b VARCHAR COMMENT 'bee')")
        conn.exec_driver_sql("CREATE VIEW ns.v (k, s) COMMENT 'big' AS SELECT a, b FROM ns.t")
    inspector = sa.inspect(engine)
    assert inspector.get_view_names("ns") == ["v"]
    assert inspector.get_view_names("nowhere") == []
    assert inspector.get_table_names("ns") == ["t"]
    assert inspector.get_view_definition("v", "ns") == "CREATE VIEW v AS SELECT a, b FROM ns.t;"
    columns = inspector.get_columns("v", "ns")
    assert [(c["name"], str(c["type"]), c["nullable"]) for c in columns] == [
        ("k", "BIGINT", True),
        ("s", "VARCHAR", True),
    ]
    assert inspector.get_table_comment("v", "ns") == {"text": "big"}
    assert inspector.has_table("v", "ns") and not inspector.has_table("nope", "ns")
    view = sa.Table("v", sa.MetaData(), schema="ns", autoload_with=engine)
    with engine.connect() as conn:
        conn.exec_driver_sql("INSERT INTO ns.t VALUES (1, 'x'), (2, 'y')")
        conn.commit()
        rows = conn.execute(sa.select(view.c.k, view.c.s).order_by(view.c.k)).fetchall()
    assert [tuple(r) for r in rows] == [(1, "x"), (2, "y")]
    engine.dispose()


def test_superset_lists_views(tmp_path: Path) -> None:
    from trinity_dbapi.superset.spec import TrinityEngineSpec as Spec

    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE NAMESPACE ns")
        conn.exec_driver_sql("CREATE TABLE ns.t (a INT8)")
        conn.exec_driver_sql("CREATE VIEW ns.v AS SELECT a FROM ns.t")
    inspector = sa.inspect(engine)
    assert Spec.get_view_names(None, inspector, "ns") == {"v"}  # type: ignore[arg-type]
    assert Spec.get_table_names(None, inspector, "ns") == {"t"}  # type: ignore[arg-type]
    engine.dispose()
