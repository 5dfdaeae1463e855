"""The compilers: the SQL each construct renders, and what it returns when it runs.

Every query is checked twice: its compiled text exactly, then its rows from a
real lakehouse (the ``data`` fixture), so a rendering that reads well but does
not parse, or means something else, fails.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc, func, select
from sqlalchemy.schema import (
    CreateIndex,
    CreateSequence,
    CreateTable,
    DropIndex,
    DropTableComment,
    SetColumnComment,
    SetTableComment,
)

import trinity_dbapi
from tests.sqlalchemy.helpers import latest_version
from trinity_dbapi.sqlalchemy import TrinityDialect, as_of

metadata = sa.MetaData()
people = sa.Table(
    "people",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(10)),
    sa.Column("grp", sa.Integer),
    schema="ns",
)
pets = sa.Table(
    "pets",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("owner_id", sa.ForeignKey("ns.people.id")),
    sa.Column("label", sa.String),
    schema="ns",
)

PEOPLE = [(1, "alpha", 1), (2, "Beta", 1), (3, "gamma", 2), (4, "delta", 2), (5, "Alfa", 3)]
PETS = [(10, 1, "x"), (11, 1, "y"), (12, 3, "z")]


@pytest.fixture
def data(engine: sa.Engine) -> sa.Engine:
    """``engine`` with ``ns.people`` and ``ns.pets`` holding PEOPLE and PETS."""
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(people.insert(), [dict(zip(("id", "name", "grp"), r)) for r in PEOPLE])
        conn.execute(pets.insert(), [dict(zip(("id", "owner_id", "label"), r)) for r in PETS])
    return engine


def scratch_people() -> sa.Table:
    """A copy of ``people`` in a metadata of its own: indices made on it stay there."""
    return people.to_metadata(sa.MetaData())


def sql(statement: Any, **compile_kwargs: Any) -> str:
    """``statement`` compiled by the trinity dialect alone (no engine)."""
    return str(statement.compile(dialect=TrinityDialect(), compile_kwargs=compile_kwargs))


def run(engine: sa.Engine, statement: Any) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(statement)]


def check(engine: sa.Engine, statement: Any, text: str, expected: list[tuple[Any, ...]]) -> None:
    """``statement`` compiles to ``text`` (with and without an engine) and returns ``expected``."""
    assert sql(statement) == text
    assert str(statement.compile(engine)) == text
    assert run(engine, statement) == expected


# -- queries ------------------------------------------------------------------------------


def test_join_filter_order_limit_offset(data: sa.Engine) -> None:
    statement = (
        select(people.c.name, pets.c.label)
        .join_from(people, pets, people.c.id == pets.c.owner_id)
        .where(people.c.grp >= 1)
        .order_by(pets.c.id)
        .limit(2)
        .offset(1)
    )
    text = (
        "SELECT ns.people.name, ns.pets.label \n"
        "FROM ns.people JOIN ns.pets ON ns.people.id = ns.pets.owner_id \n"
        "WHERE ns.people.grp >= ? ORDER BY ns.pets.id\n LIMIT ?\n OFFSET ?"
    )
    check(data, statement, text, [("alpha", "y"), ("gamma", "z")])


def test_limit_alone(data: sa.Engine) -> None:
    statement = select(people.c.id).order_by(people.c.id.desc()).limit(2)
    text = "SELECT ns.people.id \nFROM ns.people ORDER BY ns.people.id DESC\n LIMIT ?"
    check(data, statement, text, [(5,), (4,)])


def test_offset_alone_has_no_limit(data: sa.Engine) -> None:
    statement = select(people.c.id).order_by(people.c.id).offset(3)
    text = "SELECT ns.people.id \nFROM ns.people ORDER BY ns.people.id\n OFFSET ?"
    check(data, statement, text, [(4,), (5,)])


def test_literal_limit_and_offset(data: sa.Engine) -> None:
    statement = select(people.c.id).order_by(people.c.id).limit(1).offset(2)
    assert sql(statement, literal_binds=True) == (
        "SELECT ns.people.id \nFROM ns.people ORDER BY ns.people.id\n LIMIT 1\n OFFSET 2"
    )


def test_aggregates_group_by_having(data: sa.Engine) -> None:
    statement = (
        select(people.c.grp, func.count(), func.sum(people.c.id), func.min(people.c.name))
        .group_by(people.c.grp)
        .having(func.count() > 1)
        .order_by(people.c.grp)
    )
    text = (
        "SELECT ns.people.grp, count(*) AS count_1, sum(ns.people.id) AS sum_1, "
        "min(ns.people.name) AS min_1 \n"
        "FROM ns.people GROUP BY ns.people.grp \n"
        "HAVING count(*) > ? ORDER BY ns.people.grp"
    )
    check(data, statement, text, [(1, 2, 3, "Beta"), (2, 2, 7, "delta")])


def test_window_function(data: sa.Engine) -> None:
    statement = select(people.c.id, func.avg(people.c.id).over(partition_by=people.c.grp)).order_by(
        people.c.id
    )
    text = (
        "SELECT ns.people.id, avg(ns.people.id) OVER (PARTITION BY ns.people.grp) AS anon_1 \n"
        "FROM ns.people ORDER BY ns.people.id"
    )
    check(data, statement, text, [(1, 1.5), (2, 1.5), (3, 3.5), (4, 3.5), (5, 5.0)])


def test_ilike_and_not_ilike(data: sa.Engine) -> None:
    base = select(people.c.id).order_by(people.c.id)
    head = "SELECT ns.people.id \nFROM ns.people \nWHERE "
    tail = " ORDER BY ns.people.id"
    check(
        data,
        base.where(people.c.name.ilike("a%")),
        f"{head}ns.people.name ILIKE ?{tail}",
        [(1,), (5,)],
    )
    check(
        data,
        base.where(people.c.name.not_ilike("a%")),
        f"{head}ns.people.name NOT ILIKE ?{tail}",
        [(2,), (3,), (4,)],
    )
    check(
        data,
        base.where(people.c.name.ilike("AL/%%", escape="/")),
        f"{head}ns.people.name ILIKE ? ESCAPE '/'{tail}",
        [],
    )
    check(
        data,
        base.where(people.c.name.ilike("%TA", escape="/")),
        f"{head}ns.people.name ILIKE ? ESCAPE '/'{tail}",
        [(2,), (4,)],
    )


def test_regexp_match(data: sa.Engine) -> None:
    base = select(people.c.id).order_by(people.c.id)
    head = "SELECT ns.people.id \nFROM ns.people \nWHERE "
    tail = " ORDER BY ns.people.id"
    check(
        data,
        base.where(people.c.name.regexp_match("^[ab]")),
        f"{head}regexp_matches(ns.people.name, ?){tail}",
        [(1,)],
    )
    check(
        data,
        base.where(people.c.name.regexp_match("^[ab]", flags="i")),
        f"{head}regexp_matches(ns.people.name, ?, 'i'){tail}",
        [(1,), (2,), (5,)],
    )
    check(
        data,
        base.where(~people.c.name.regexp_match("^[ab]")),
        f"{head}NOT regexp_matches(ns.people.name, ?){tail}",
        [(2,), (3,), (4,), (5,)],
    )


def test_regexp_replace(data: sa.Engine) -> None:
    check(
        data,
        select(people.c.name.regexp_replace("a", "A")).order_by(people.c.id),
        "SELECT regexp_replace(ns.people.name, ?, ?) AS anon_1 \n"
        "FROM ns.people ORDER BY ns.people.id",
        [("Alpha",), ("BetA",), ("gAmma",), ("deltA",), ("AlfA",)],
    )
    check(
        data,
        select(people.c.name.regexp_replace("a", "A", flags="g")).order_by(people.c.id),
        "SELECT regexp_replace(ns.people.name, ?, ?, 'g') AS anon_1 \n"
        "FROM ns.people ORDER BY ns.people.id",
        [("AlphA",), ("BetA",), ("gAmmA",), ("deltA",), ("AlfA",)],
    )


#: SQLAlchemy 2 added the ``//`` operator; 1.4's columns have none.
needs_floordiv = pytest.mark.skipif(
    not hasattr(sa.sql.operators, "floordiv"), reason="SQLAlchemy 1.4 has no // operator"
)


@needs_floordiv
def test_truediv_and_floordiv(data: sa.Engine) -> None:
    statement = select(people.c.id / 2, people.c.id // 2, -people.c.id // 2).where(people.c.id == 5)
    text = (
        "SELECT ns.people.id / ? AS anon_1, CAST(FLOOR(ns.people.id / ?) AS BIGINT) AS anon_2, "
        "CAST(FLOOR((-ns.people.id) / ?) AS BIGINT) AS anon_3 \n"
        "FROM ns.people \nWHERE ns.people.id = ?"
    )
    check(data, statement, text, [(2.5, 2, -3)])


@needs_floordiv
def test_floordiv_of_integers_is_an_integer(data: sa.Engine) -> None:
    ((value,),) = run(data, select(people.c.id // 2).where(people.c.id == 5))
    assert (value, type(value)) == (2, int)


def test_other_operators(data: sa.Engine) -> None:
    statement = (
        select(
            sa.cast(people.c.id, sa.String),
            people.c.name + "!",
            func.coalesce(pets.c.label, "-"),
        )
        .outerjoin_from(people, pets, people.c.id == pets.c.owner_id)
        .where(sa.tuple_(people.c.id, people.c.grp).in_([(1, 1), (4, 2), (5, 3)]))
        .where(people.c.name.contains("l"))
        .order_by(people.c.id, pets.c.label.desc().nulls_last())
    )
    assert sql(statement) == (
        "SELECT CAST(ns.people.id AS VARCHAR) AS id, ns.people.name || ? AS anon_1, "
        "coalesce(ns.pets.label, ?) AS coalesce_1 \n"
        "FROM ns.people LEFT OUTER JOIN ns.pets ON ns.people.id = ns.pets.owner_id \n"
        "WHERE (ns.people.id, ns.people.grp) IN (__[POSTCOMPILE_param_1]) "
        "AND (ns.people.name LIKE '%' || ? || '%') "
        "ORDER BY ns.people.id, ns.pets.label DESC NULLS LAST"
    )
    assert run(data, statement) == [
        ("1", "alpha!", "y"),
        ("1", "alpha!", "x"),
        ("4", "delta!", "-"),
        ("5", "Alfa!", "-"),
    ]


def test_for_update_is_dropped(data: sa.Engine) -> None:
    # Snapshot isolation takes no row locks: a conflicting commit fails instead.
    statement = select(people.c.id).where(people.c.id < 3).order_by(people.c.id)
    text = "SELECT ns.people.id \nFROM ns.people \nWHERE ns.people.id < ? ORDER BY ns.people.id"
    check(data, statement.with_for_update(), text, [(1,), (2,)])


def test_reserved_names_are_quoted(engine: sa.Engine) -> None:
    table = sa.Table(
        "index",
        sa.MetaData(),
        sa.Column("select", sa.Integer),
        sa.Column("Mixed", sa.Integer),
        sa.Column("namespace", sa.Integer),
        schema="ns",
    )
    assert str(CreateTable(table).compile(engine)) == (
        '\nCREATE TABLE ns."index" (\n\t"select" INT4, \n\t"Mixed" INT4, \n\t"namespace" INT4\n)\n\n'
    )
    table.create(engine)
    with engine.begin() as conn:
        conn.execute(table.insert(), {"select": 1, "Mixed": 2, "namespace": 3})
    statement = select(table).where(table.c["select"] == 1)
    assert sql(statement) == (
        'SELECT ns."index"."select", ns."index"."Mixed", ns."index"."namespace" \n'
        'FROM ns."index" \nWHERE ns."index"."select" = ?'
    )
    assert run(engine, statement) == [(1, 2, 3)]


# -- time travel ----------------------------------------------------------------------------


def test_as_of_version(data: sa.Engine) -> None:
    version = latest_version(data)
    assert version == 3  # the namespace, the tables, the rows
    with data.begin() as conn:
        conn.execute(people.delete().where(people.c.id > 1))
    statement = as_of(select(people.c.id).order_by(people.c.id), people, version=version)
    text = (
        "SELECT ns.people.id \nFROM ns.people FOR SYSTEM_VERSION AS OF "
        f"{version} ORDER BY ns.people.id"
    )
    check(data, statement, text, [(1,), (2,), (3,), (4,), (5,)])
    assert run(data, select(people.c.id)) == [(1,)]
    # An earlier version: before the rows were inserted.
    assert run(data, as_of(select(people.c.id), people, version=version - 1)) == []


def test_as_of_timestamp(data: sa.Engine) -> None:
    with data.connect() as conn:
        created = conn.execute(
            sa.text("SELECT created_at FROM system.versions ORDER BY version DESC LIMIT 1")
        ).scalar_one()
    with data.begin() as conn:
        conn.execute(people.delete())
    naive = created.astimezone(datetime.timezone.utc).replace(tzinfo=None)  # naive is UTC
    statement = as_of(select(func.count()).select_from(people), people, timestamp=naive)
    text = (
        "SELECT count(*) AS count_1 \nFROM ns.people FOR SYSTEM_TIME AS OF "
        f"TIMESTAMP '{naive.isoformat()}'"
    )
    check(data, statement, text, [(5,)])
    aware = as_of(select(func.count()).select_from(people), people, timestamp=created)
    assert sql(aware).endswith(f"FOR SYSTEM_TIME AS OF TIMESTAMPTZ '{created.isoformat()}'")
    assert run(data, aware) == [(5,)]
    tomorrow = created.date() + datetime.timedelta(days=1)
    by_date = as_of(select(func.count()).select_from(people), people, timestamp=tomorrow)
    assert sql(by_date).endswith(f"FOR SYSTEM_TIME AS OF DATE '{tomorrow.isoformat()}'")
    assert run(data, by_date) == [(0,)]


def test_as_of_snapshot_name_is_quoted() -> None:
    statement = as_of(select(people.c.id), people, version="it's")
    assert sql(statement) == (
        "SELECT ns.people.id \nFROM ns.people FOR SYSTEM_VERSION AS OF 'it''s'"
    )


def test_as_of_reads_one_table_of_a_join(data: sa.Engine) -> None:
    version = latest_version(data)
    with data.begin() as conn:
        conn.execute(pets.delete())
        conn.execute(people.update().values(name="renamed"))
    statement = as_of(
        select(people.c.name, pets.c.label)
        .join_from(people, pets, people.c.id == pets.c.owner_id)
        .order_by(pets.c.id),
        pets,
        version=version,
    )
    assert sql(statement) == (
        "SELECT ns.people.name, ns.pets.label \n"
        f"FROM ns.people JOIN ns.pets FOR SYSTEM_VERSION AS OF {version} "
        "ON ns.people.id = ns.pets.owner_id ORDER BY ns.pets.id"
    )
    assert run(data, statement) == [("renamed", "x"), ("renamed", "y"), ("renamed", "z")]


def test_as_of_named_alias(data: sa.Engine) -> None:
    version = latest_version(data)
    with data.begin() as conn:
        conn.execute(people.delete())
    alias = people.alias("p")
    statement = as_of(select(alias.c.id).where(alias.c.grp == 2), alias, version=version)
    text = f"SELECT p.id \nFROM ns.people FOR SYSTEM_VERSION AS OF {version} AS p \nWHERE p.grp = ?"
    check(data, statement, text, [(3,), (4,)])


def test_as_of_anonymous_alias(data: sa.Engine) -> None:
    version = latest_version(data)
    with data.begin() as conn:
        conn.execute(people.delete())
    alias = people.alias()
    statement = as_of(select(alias.c.id).where(alias.c.grp == 2), alias, version=version)
    text = (
        "SELECT people_1.id \nFROM ns.people FOR SYSTEM_VERSION AS OF "
        f"{version} AS people_1 \nWHERE people_1.grp = ?"
    )
    check(data, statement, text, [(3,), (4,)])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, r"as_of\(\) needs exactly one of version= or timestamp="),
        (
            {"version": 1, "timestamp": datetime.date(2024, 1, 1)},
            r"as_of\(\) needs exactly one of version= or timestamp=",
        ),
        ({"version": True}, r"as_of\(version=...\) takes an int or a str, not True"),
        ({"version": 1.5}, r"as_of\(version=...\) takes an int or a str, not 1\.5"),
        (
            {"timestamp": "2024-01-01"},
            r"as_of\(timestamp=...\) takes a datetime or a date, not '2024-01-01'",
        ),
    ],
)
def test_as_of_refuses_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(exc.ArgumentError, match=message):
        as_of(select(people.c.id), people, **kwargs)


def test_as_of_is_ignored_by_other_dialects() -> None:
    from sqlalchemy.dialects import sqlite

    statement = as_of(select(people.c.id), people, version=3)
    assert str(statement.compile(dialect=sqlite.dialect())) == (
        "SELECT ns.people.id \nFROM ns.people"
    )


# -- literals ---------------------------------------------------------------------------------


def test_date_and_time_literals(engine: sa.Engine) -> None:
    values = [
        datetime.date(2024, 1, 2),
        datetime.datetime(2024, 1, 2, 3, 4, 5, 678901),
        datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
        datetime.time(1, 2, 3),
    ]
    statement = select(*(sa.literal(value) for value in values))
    text = (
        "SELECT DATE '2024-01-02' AS anon_1, TIMESTAMP '2024-01-02 03:04:05.678901' AS anon_2, "
        "TIMESTAMPTZ '2024-01-02 03:04:05+00:00' AS anon_3, TIME '01:02:03' AS anon_4"
    )
    assert sql(statement, literal_binds=True) == text
    with engine.connect() as conn:
        rendered = conn.exec_driver_sql(text).one()
        bound = conn.execute(statement).one()
    assert tuple(rendered) == tuple(bound) == tuple(values)


def test_literals_keep_their_type_in_a_union(engine: sa.Engine) -> None:
    day = datetime.date(2024, 2, 29)
    statement = sa.union_all(select(sa.literal(day)), select(sa.literal(day)))
    rendered = sql(statement, literal_binds=True)
    assert (
        rendered
        == "SELECT DATE '2024-02-29' AS anon_1 UNION ALL SELECT DATE '2024-02-29' AS anon_2"
    )
    with engine.connect() as conn:
        assert conn.exec_driver_sql(rendered).all() == [(day,), (day,)]


def test_literal_strings_and_numbers(engine: sa.Engine) -> None:
    statement = select(sa.literal("it's"), sa.literal(1.5), sa.literal(True), sa.literal(None))
    rendered = sql(statement, literal_binds=True)
    assert rendered == "SELECT 'it''s' AS anon_1, 1.5 AS anon_2, true AS anon_3, NULL AS anon_4"
    with engine.connect() as conn:
        assert conn.exec_driver_sql(rendered).all() == [("it's", 1.5, True, None)]


# -- DML ----------------------------------------------------------------------------------------


def test_insert_update_delete(data: sa.Engine) -> None:
    insert = people.insert().values(
        [{"id": 6, "name": "f", "grp": 9}, {"id": 7, "name": "g", "grp": None}]
    )
    update = people.update().where(people.c.grp == 9).values(name=people.c.name + "!")
    delete = people.delete().where(people.c.id <= 2)
    assert sql(insert) == "INSERT INTO ns.people (id, name, grp) VALUES (?, ?, ?), (?, ?, ?)"
    assert sql(update) == "UPDATE ns.people SET name=(ns.people.name || ?) WHERE ns.people.grp = ?"
    assert sql(delete) == "DELETE FROM ns.people WHERE ns.people.id <= ?"
    with data.begin() as conn:
        assert conn.execute(insert).rowcount == 2
        assert conn.execute(update).rowcount == 1
        assert conn.execute(delete).rowcount == 2
    assert run(data, select(people).order_by(people.c.id)) == [
        (3, "gamma", 2),
        (4, "delta", 2),
        (5, "Alfa", 3),
        (6, "f!", 9),
        (7, "g", None),
    ]


def test_update_and_delete_with_subqueries(data: sa.Engine) -> None:
    owners = select(pets.c.owner_id).where(pets.c.label == "z").scalar_subquery()
    first_pet = select(func.min(pets.c.id)).where(pets.c.owner_id == people.c.id).scalar_subquery()
    update = people.update().where(people.c.id == owners).values(grp=first_pet)
    delete = people.delete().where(~people.c.id.in_(select(pets.c.owner_id)))
    assert sql(update) == (
        "UPDATE ns.people SET grp=(SELECT min(ns.pets.id) AS min_1 \nFROM ns.pets \n"
        "WHERE ns.pets.owner_id = ns.people.id) WHERE ns.people.id = "
        "(SELECT ns.pets.owner_id \nFROM ns.pets \nWHERE ns.pets.label = ?)"
    )
    assert sql(delete) == (
        "DELETE FROM ns.people WHERE (ns.people.id NOT IN (SELECT ns.pets.owner_id \nFROM ns.pets))"
    )
    with data.begin() as conn:
        assert conn.execute(update).rowcount == 1
        assert conn.execute(delete).rowcount == 3
    assert run(data, select(people).order_by(people.c.id)) == [(1, "alpha", 1), (3, "gamma", 12)]


def test_update_from_another_table(data: sa.Engine) -> None:
    update = people.update().where(people.c.id == pets.c.owner_id).values(grp=pets.c.id)
    assert sql(update) == (
        "UPDATE ns.people SET grp=ns.pets.id FROM ns.pets WHERE ns.people.id = ns.pets.owner_id"
    )
    single = people.update().where(people.c.id == pets.c.owner_id).where(pets.c.label == "z")
    with data.begin() as conn:
        assert conn.execute(single.values(grp=pets.c.id)).rowcount == 1
    assert run(data, select(people.c.id, people.c.grp).where(people.c.id == 3)) == [(3, 12)]


# -- DDL ---------------------------------------------------------------------------------------


def test_create_table_with_options(engine: sa.Engine) -> None:
    table = sa.Table(
        "events",
        sa.MetaData(),
        sa.Column("day", sa.Date, nullable=False, comment="when it's"),
        sa.Column("kind", sa.String(10), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("owner_id", sa.ForeignKey("ns.people.id")),
        sa.ForeignKeyConstraint(["seq"], ["ns.people.id"]),
        sa.UniqueConstraint("day", "kind"),
        sa.CheckConstraint("seq > 0"),
        schema="ns",
        comment="all the events",
        trinity_partitioned_by=["day", "kind"],
        trinity_properties={"owner": "ana", "Odd Key": "it's"},
    )
    sa.Table("people", table.metadata, sa.Column("id", sa.BigInteger), schema="ns")
    text = (
        "\nCREATE TABLE ns.events (\n"
        "\tday DATE NOT NULL COMMENT 'when it''s', \n"
        "\tkind VARCHAR(10) NOT NULL, \n"
        "\tseq INT4 NOT NULL, \n"
        "\towner_id INT8, \n"  # typed by its foreign key, which is not rendered
        "\tPRIMARY KEY (kind, seq)\n"
        ")\n"
        "PARTITIONED BY (day, kind)\n"
        "COMMENT 'all the events'\n"
        "WITH (owner = 'ana', \"Odd Key\" = 'it''s')\n\n"
    )
    assert sql(CreateTable(table)) == text
    table.create(engine)
    inspector = sa.inspect(engine)
    assert inspector.get_pk_constraint("events", "ns") == {
        "constrained_columns": ["kind", "seq"],
        "name": None,
    }
    assert inspector.get_foreign_keys("events", "ns") == []
    assert inspector.get_unique_constraints("events", "ns") == []
    assert inspector.get_table_comment("events", "ns") == {"text": "all the events"}
    assert inspector.get_table_options("events", "ns") == {
        "trinity_partitioned_by": ["day", "kind"],
        "trinity_properties": {"owner": "ana", "Odd Key": "it's"},
    }
    assert [(c["name"], c["comment"]) for c in inspector.get_columns("events", "ns")] == [
        ("day", "when it's"),
        ("kind", None),
        ("seq", None),
        ("owner_id", None),
    ]


def test_primary_key_is_rendered_without_its_name(engine: sa.Engine) -> None:
    table = sa.Table(
        "t",
        sa.MetaData(naming_convention={"pk": "pk_%(table_name)s"}),
        sa.Column("a", sa.Integer),
        sa.Column("b", sa.String(3)),
        sa.PrimaryKeyConstraint("b", "a", name="my_key"),
        schema="ns",
    )
    assert sql(CreateTable(table)) == (
        "\nCREATE TABLE ns.t (\n\ta INT4 NOT NULL, \n\tb VARCHAR(3) NOT NULL, \n"
        "\tPRIMARY KEY (b, a)\n)\n\n"
    )
    table.create(engine)
    assert sa.inspect(engine).get_pk_constraint("t", "ns") == {
        "constrained_columns": ["b", "a"],
        "name": None,
    }


def test_create_and_drop_if_exists(engine: sa.Engine) -> None:
    table = sa.Table("t", sa.MetaData(), sa.Column("a", sa.Integer), schema="ns")
    assert sql(CreateTable(table, if_not_exists=True)) == (
        "\nCREATE TABLE IF NOT EXISTS ns.t (\n\ta INT4\n)\n\n"
    )
    assert sql(sa.schema.DropTable(table, if_exists=True)) == "\nDROP TABLE IF EXISTS ns.t"
    with engine.begin() as conn:
        conn.execute(CreateTable(table, if_not_exists=True))
        conn.execute(CreateTable(table, if_not_exists=True))
    assert sa.inspect(engine).get_table_names("ns") == ["t"]
    with engine.begin() as conn:
        conn.execute(sa.schema.DropTable(table, if_exists=True))
        conn.execute(sa.schema.DropTable(table, if_exists=True))
    assert sa.inspect(engine).get_table_names("ns") == []


def test_create_and_drop_index(data: sa.Engine) -> None:
    index = sa.Index("ix_name", scratch_people().c.name)
    assert sql(CreateIndex(index)) == "CREATE INDEX ix_name ON ns.people (name)"
    assert sql(CreateIndex(index, if_not_exists=True)) == (
        "CREATE INDEX IF NOT EXISTS ix_name ON ns.people (name)"
    )
    assert sql(DropIndex(index)) == "\nDROP INDEX ix_name ON ns.people"
    assert sql(DropIndex(index, if_exists=True)) == "\nDROP INDEX IF EXISTS ix_name ON ns.people"
    index.create(data)
    assert sa.inspect(data).get_indexes("people", "ns") == [
        {"name": "ix_name", "column_names": ["name"], "unique": False, "dialect_options": {}}
    ]
    assert run(data, select(people.c.id).where(people.c.name == "gamma")) == [(3,)]
    index.drop(data)
    assert sa.inspect(data).get_indexes("people", "ns") == []


def test_unique_index_is_an_ordinary_index() -> None:
    index = sa.Index("ux", sa.Table("t", sa.MetaData(), sa.Column("a", sa.Integer)).c.a)
    index.unique = True
    assert sql(CreateIndex(index)) == "CREATE INDEX ux ON t (a)"


def test_table_comment_ddl(data: sa.Engine) -> None:
    table = sa.Table("people", sa.MetaData(), schema="ns", comment="it's them")
    assert sql(SetTableComment(table)) == (
        "ALTER TABLE ns.people SET PROPERTIES (comment = 'it''s them')"
    )
    assert sql(DropTableComment(table)) == "ALTER TABLE ns.people UNSET PROPERTIES (comment)"
    with data.begin() as conn:
        conn.execute(SetTableComment(table))
    assert sa.inspect(data).get_table_comment("people", "ns") == {"text": "it's them"}
    with data.begin() as conn:
        conn.execute(DropTableComment(table))
    assert sa.inspect(data).get_table_comment("people", "ns") == {"text": None}


# -- refused at compile time -----------------------------------------------------------------


def one_column(*args: Any, **kwargs: Any) -> sa.Table:
    return sa.Table("x", sa.MetaData(), sa.Column("a", *args, **kwargs))


@pytest.mark.parametrize(
    ("construct", "message"),
    [
        (
            lambda: CreateTable(one_column(sa.Integer, server_default="1")),
            (
                r"column 'a': TrinityLake columns have no server defaults or computed values; "
                r"give the value in Python \(Column\(default=...\)\) instead"
            ),
        ),
        (
            lambda: CreateTable(one_column(sa.Integer, server_default=sa.text("now()"))),
            r"no server defaults",
        ),
        (
            lambda: CreateTable(one_column(sa.Integer, sa.Computed("1 + 1"))),
            r"no server defaults or computed values",
        ),
        (
            lambda: CreateSequence(sa.Sequence("s")),
            r"TrinityLake has no sequences: generate keys in Python",
        ),
        (
            lambda: CreateTable(one_column(sa.JSON)),
            r"TrinityLake has no JSON column type: store JSON text in a String column",
        ),
        (
            lambda: CreateIndex(sa.Index("ix", *list(scratch_people().c)[:2])),
            (
                r"index 'ix': a TrinityLake secondary index covers exactly one column "
                r"\(not several, not an expression\); create one index per column"
            ),
        ),
        (
            lambda: CreateIndex(sa.Index("ix", func.lower(scratch_people().c.name))),
            r"index 'ix': a TrinityLake secondary index covers exactly one column",
        ),
        (
            lambda: SetColumnComment(people.c.name),
            r"trinity sets column comments in CREATE TABLE and ALTER TABLE ADD COLUMN only",
        ),
    ],
    ids=[
        "server_default",
        "server_default_text",
        "computed",
        "sequence",
        "json",
        "composite_index",
        "expression_index",
        "set_column_comment",
    ],
)
def test_compile_errors(construct: Any, message: str) -> None:
    with pytest.raises(exc.CompileError, match=message):
        sql(construct())


def test_metadata_create_all_stops_at_a_refused_column(engine: sa.Engine) -> None:
    metadata = sa.MetaData()
    sa.Table("ok", metadata, sa.Column("a", sa.Integer), schema="ns")
    sa.Table("bad", metadata, sa.Column("a", sa.JSON), schema="ns")
    before = latest_version(engine)
    with pytest.raises(exc.CompileError, match="no JSON column type"), engine.begin() as conn:
        metadata.create_all(conn)
    assert latest_version(engine) == before
    assert sa.inspect(engine).get_table_names("ns") == []


def test_identity_is_refused_with_its_own_message() -> None:
    with pytest.raises(exc.CompileError, match="no identity \\(auto-increment\\) columns"):
        sql(CreateTable(one_column(sa.Integer, sa.Identity())))


def test_identity_is_refused() -> None:
    with pytest.raises(exc.CompileError, match="column 'a'"):
        sql(CreateTable(one_column(sa.Integer, sa.Identity())))


def test_interval_is_refused() -> None:
    with pytest.raises(exc.CompileError, match="no INTERVAL column type"):
        sql(CreateTable(one_column(sa.Interval)))


def _generic_compiler_renders_returning() -> bool:
    """SQLAlchemy 2's base compiler renders RETURNING; 1.4's refuses it (CompileError)."""
    try:
        people.insert().returning(people.c.id).compile(dialect=sa.engine.default.DefaultDialect())
    except exc.CompileError:
        return False
    return True


COMPILER_RENDERS_RETURNING = _generic_compiler_renders_returning()


def test_insert_returning_compiles_and_the_driver_refuses_it() -> None:
    # SQLAlchemy's rule (its ReturningGuardsTest): an explicit RETURNING on a
    # single execute() goes to the database, which refuses it.
    if not COMPILER_RENDERS_RETURNING:
        with pytest.raises(exc.CompileError, match="RETURNING is not supported"):
            sql(people.insert().returning(people.c.id))
        return
    assert sql(people.insert().returning(people.c.id)).endswith("RETURNING ns.people.id")


def test_insert_returning_is_refused_when_run(data: sa.Engine) -> None:
    before = latest_version(data)
    refused = exc.NotSupportedError if COMPILER_RENDERS_RETURNING else exc.CompileError
    with data.begin() as conn, pytest.raises(refused) as info:
        conn.execute(people.insert().returning(people.c.id), {"id": 9, "name": "i"})
    if COMPILER_RENDERS_RETURNING:  # the driver's refusal
        assert isinstance(info.value.orig, trinity_dbapi.errors.NotSupportedError)
        assert "RETURNING is not supported on INSERT" in str(info.value)
    else:  # SQLAlchemy 1.4's compiler: nothing reaches the lakehouse
        assert "RETURNING is not supported by this dialect" in str(info.value)
    assert latest_version(data) == before


def test_column_check_constraint_is_left_out() -> None:
    table = one_column(sa.Integer, sa.CheckConstraint("a > 0"))
    assert sql(CreateTable(table)) == "\nCREATE TABLE x (\n\ta INT4\n)\n\n"


def test_table_check_constraint_is_left_out() -> None:
    table = sa.Table(
        "x", sa.MetaData(), sa.Column("a", sa.Integer), sa.CheckConstraint("a > 0", name="pos")
    )
    assert sql(CreateTable(table)) == "\nCREATE TABLE x (\n\ta INT4\n)\n\n"
