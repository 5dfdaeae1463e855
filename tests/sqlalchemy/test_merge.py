"""``trinity_dbapi.sqlalchemy.merge``: the SQL it compiles to and what it does on a lakehouse."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc

from trinity_dbapi.sqlalchemy import TrinityDialect
from trinity_dbapi.sqlalchemy.merge import merge

metadata = sa.MetaData()
target = sa.Table(
    "t", metadata, sa.Column("id", sa.Integer), sa.Column("v", sa.Integer), schema="ns"
)
source = sa.Table(
    "s", metadata, sa.Column("id", sa.Integer), sa.Column("v", sa.Integer), schema="ns"
)


@pytest.fixture
def data(engine: Any) -> Any:
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(target.insert(), [{"id": 1, "v": 1}, {"id": 2, "v": 2}, {"id": 4, "v": 4}])
        conn.execute(source.insert(), [{"id": 2, "v": 20}, {"id": 3, "v": 30}])
    return engine


def rows(engine: Any) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.select(target).order_by(target.c.id))]


def sql(stmt: Any) -> str:
    return str(stmt.compile(dialect=TrinityDialect()))


def test_update_and_insert_with_conditions_and_parameters(data: Any) -> None:
    stmt = (
        merge(target)
        .using(source)
        .on(target.c.id == source.c.id)
        .when_matched_then_update({target.c.v: source.c.v + 1}, condition=source.c.v > 5)
        .when_not_matched_then_insert({"id": source.c.id, "v": 7})
    )
    assert sql(stmt) == (
        "MERGE INTO ns.t USING ns.s ON ns.t.id = ns.s.id WHEN MATCHED AND ns.s.v > ? "
        "THEN UPDATE SET v = ns.s.v + ? WHEN NOT MATCHED THEN INSERT (id, v) VALUES (ns.s.id, ?)"
    )
    with data.begin() as conn:
        assert conn.execute(stmt).rowcount == 2
    assert rows(data) == [(1, 1), (2, 21), (3, 7), (4, 4)]


def test_subquery_source_with_bound_parameter_and_by_source_clauses(data: Any) -> None:
    src = (
        sa.select(source.c.id, (source.c.v * 2).label("v"))
        .where(source.c.v > sa.bindparam("low"))
        .subquery("src")
    )
    stmt = (
        merge(target)
        .using(src)
        .on(target.c.id == src.c.id)
        .when_matched_then_delete()
        .when_not_matched_by_source_then_update({"v": 0}, condition=target.c.id < 4)
        .when_not_matched_by_source_then_delete()
    )
    with data.begin() as conn:
        assert conn.execute(stmt, {"low": 10}).rowcount == 3  # 2 deleted, 1 set to 0, 4 deleted
    assert rows(data) == [(1, 0)]


def test_values_source_star_clauses_and_do_nothing(data: Any) -> None:
    values = sa.values(sa.column("id", sa.Integer), sa.column("v", sa.Integer), name="vv").data(
        [(1, 100), (9, 900)]
    )
    stmt = (
        merge(target)
        .using(values)
        .on(target.c.id == values.c.id)
        .when_matched_then_do_nothing(condition=values.c.v > 1000)
        .when_matched_then_update()
        .when_not_matched_then_do_nothing(condition=values.c.v < 0)
        .when_not_matched_then_insert()
    )
    assert "THEN UPDATE SET * " in sql(stmt) and sql(stmt).endswith("THEN INSERT *")
    with data.begin() as conn:
        assert conn.execute(stmt).rowcount == 2
    assert rows(data) == [(1, 100), (2, 2), (4, 4), (9, 900)]


def test_a_rolled_back_merge_leaves_nothing(data: Any) -> None:
    stmt = merge(target).using(source).on(target.c.id == source.c.id).when_matched_then_delete()
    with data.connect() as conn:
        transaction = conn.begin()
        assert conn.execute(stmt).rowcount == 1
        transaction.rollback()
    assert rows(data) == [(1, 1), (2, 2), (4, 4)]


def test_incomplete_or_foreign_use_is_a_clear_error() -> None:
    with pytest.raises(exc.CompileError, match=r"needs \.using"):
        sql(merge(target).using(source))
    complete = merge(target).using(source).on(sa.true()).when_matched_then_delete()
    sqlite = sa.create_engine("sqlite://").dialect
    with pytest.raises(exc.CompileError, match="sqlite dialect cannot compile"):
        complete.compile(dialect=sqlite)
    with pytest.raises(exc.ArgumentError, match="no column 'nope'"):
        merge(target).when_matched_then_update({"nope": 1})
    with pytest.raises(exc.ArgumentError, match="writes a Table"):
        merge(source.alias("x"))  # type: ignore[arg-type]
