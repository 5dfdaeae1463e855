"""MERGE INTO and UPDATE ... FROM: DuckDB's results, file-level copy-on-write, conflicts, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.tables import managed

TARGET = [(1, 10, "a"), (2, 20, "b"), (3, None, "c"), (4, 40, None)]
SOURCE = [(1, 11, "x"), (3, 33, "y"), (5, 55, "z"), (6, None, None)]


@pytest.fixture(params=["SERIALIZABLE", "SNAPSHOT"])
def conn(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    connection = trinity_dbapi.connect(
        str(tmp_path / "lake"), autocommit=True, isolation_level=request.param
    )
    connection.cursor().execute("CREATE NAMESPACE ns")
    yield connection
    connection.close()


def load(conn: Any, target: list[tuple[Any, ...]], source: list[tuple[Any, ...]]) -> None:
    """ns.t gets one file per target row (so file-level rewrites show); ns.s one file."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (id INT4, v INT4, w VARCHAR)")
    cur.execute("CREATE TABLE ns.s (id INT4, v INT4, w VARCHAR)")
    for row in target:
        cur.execute("INSERT INTO ns.t VALUES (?, ?, ?)", list(row))
    if source:
        cur.executemany("INSERT INTO ns.s VALUES (?, ?, ?)", [list(r) for r in source])


def reference(
    target: list[tuple[Any, ...]], source: list[tuple[Any, ...]], sql: str, params: Any = None
) -> tuple[Any, list[tuple[Any, ...]]]:
    """What DuckDB's own statement does on the same rows: (row count or error text, rows)."""
    duck = duckdb.connect()
    duck.execute("CREATE SCHEMA ns")
    duck.execute("CREATE TABLE ns.t (id INT4, v INT4, w VARCHAR)")
    duck.execute("CREATE TABLE ns.s (id INT4, v INT4, w VARCHAR)")
    for name, data in (("t", target), ("s", source)):
        if data:
            duck.executemany(f"INSERT INTO ns.{name} VALUES (?, ?, ?)", [list(r) for r in data])
    twice = sql.startswith("MERGE") and acts_twice(duck, sql, params)
    try:
        outcome: Any = duck.execute(sql, params).fetchall()[0][0]
    except duckdb.Error as exc:
        outcome = str(exc).split("\n")[0]
    # A statement error (binding, casts) comes first; then the cardinality rule.
    if twice and not (isinstance(outcome, str) and "more than once" not in outcome):
        return CARDINALITY, sorted(target, key=repr)
    return outcome, sorted(duck.execute("SELECT * FROM ns.t").fetchall(), key=repr)


#: The SQL standard's MERGE cardinality error, as ``reference`` reports it.
CARDINALITY = "Invalid Input Error: cannot affect the same target row more than once"


def acts_twice(duck: Any, sql: str, params: Any) -> bool:
    """Whether DuckDB's own clause choice updates or deletes some target row twice.

    DuckDB 2.0.0 raises the standard's cardinality error itself; 2.0.1
    applies every action (the last wins). Either way the answer comes from
    DuckDB: the statement runs, without its INSERT clauses, on a copy of
    ``ns.t`` with a row number, and ``RETURNING`` lists each action's row.
    """
    node = sqlglot.parse_one(sql, dialect="duckdb")
    assert isinstance(node, exp.Merge)
    whens = node.args["whens"]
    alias = node.this.alias_or_name
    kept = []
    for when in whens.expressions:
        if not when.args.get("matched") and not when.args.get("source"):
            continue  # an INSERT acts on no target row
        then = when.args.get("then")
        if isinstance(then, exp.Update) or (isinstance(then, exp.Var) and then.name == "DELETE"):
            # Every UPDATE or DELETE becomes the same UPDATE: SET * would also set
            # the row number, and RETURNING lists a row deleted twice only once.
            keep_v = exp.EQ(this=exp.column("v"), expression=exp.column("v", table=alias))
            when.set("then", exp.Update(expressions=[keep_v]))
        kept.append(when)
    if not kept:
        return False
    whens.set("expressions", kept)
    node.this.set("this", exp.to_identifier("t_numbered"))
    if node.this.args.get("alias") is None:
        node.this.set("alias", exp.TableAlias(this=exp.to_identifier("t")))
    duck.execute("CREATE TABLE ns.t_numbered AS SELECT *, row_number() OVER () AS n FROM ns.t")
    try:
        rows = duck.execute(
            node.sql(dialect="duckdb") + " RETURNING merge_action, n", params
        ).fetchall()
    except duckdb.Error as exc:  # another error: the statement itself reports it
        return "more than once" in str(exc)
    finally:
        duck.execute("DROP TABLE IF EXISTS ns.t_numbered")
    acted = [n for action, n in rows if action == "UPDATE"]
    return len(acted) != len(set(acted))


def ours(conn: Any, sql: str, params: Any = None) -> tuple[Any, list[tuple[Any, ...]]]:
    cur = conn.cursor()
    try:
        outcome: Any = cur.execute(sql, params).rowcount
    except errors.Error as exc:
        outcome = str(exc).split("\n")[0]
    return outcome, sorted(cur.execute("SELECT * FROM ns.t").fetchall(), key=repr)


def files(conn: Any) -> set[str]:
    definition = conn.lakehouse.begin().load_table("ns", "t")
    return set(managed.metadata(conn.lakehouse.storage, definition).files())


STATEMENTS = [
    (
        "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * "
        "WHEN NOT MATCHED THEN INSERT *"
    ),
    (
        "MERGE INTO ns.t AS x USING ns.s AS y ON x.id = y.id WHEN MATCHED AND y.v > 20 "
        "THEN UPDATE SET v = y.v + x.v WHEN MATCHED THEN DELETE"
    ),
    "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE",
    (
        "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN NOT MATCHED BY SOURCE AND t.v IS NULL "
        "THEN UPDATE SET w = 'orphan' WHEN NOT MATCHED BY TARGET THEN INSERT (id) VALUES (s.id)"
    ),
    (
        "MERGE INTO ns.t USING (SELECT id + 1 AS id, w FROM ns.s WHERE v IS NOT NULL) AS s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET w = s.w || t.w "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.id, -1, s.w)"
    ),
    (
        "MERGE INTO ns.t USING (VALUES (2, 'two'), (9, 'nine')) AS s(id, w) ON t.id = s.id "
        "WHEN MATCHED THEN DO NOTHING WHEN NOT MATCHED THEN INSERT (id, w) VALUES (s.id, s.w)"
    ),
    "MERGE INTO ns.t USING ns.s USING (id) WHEN MATCHED THEN UPDATE SET v = 0",
    "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'text'",
    (
        "MERGE INTO ns.t USING (VALUES (1, 4.6), (7, 7.5)) AS s(id, v) ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, NULL)"
    ),
    "UPDATE ns.t SET v = s.v, w = s.w || '!' FROM ns.s WHERE t.id = s.id",
    "UPDATE ns.t AS x SET v = y.v * 2 FROM ns.s AS y WHERE x.id + 2 = y.id AND y.v > 40",
]


@pytest.mark.parametrize("sql", STATEMENTS)
def test_results_equal_duckdbs_own(conn: Any, sql: str) -> None:
    load(conn, TARGET, SOURCE)
    expected = reference(TARGET, SOURCE, sql)
    got = ours(conn, sql)
    if isinstance(expected[0], str):  # DuckDB's error: ours says the same, nothing changed
        assert isinstance(got[0], str) and expected[0].split(": ", 1)[-1] in got[0]
        assert got[1] == sorted(TARGET, key=repr)
    else:
        assert got == expected


@pytest.mark.parametrize("sql", STATEMENTS[:2])
def test_an_empty_target_or_source(conn: Any, sql: str) -> None:
    load(conn, [], SOURCE)
    assert ours(conn, sql) == reference([], SOURCE, sql)
    conn.cursor().execute("DROP TABLE ns.t").execute("DROP TABLE ns.s")
    load(conn, TARGET, [])
    assert ours(conn, sql) == reference(TARGET, [], sql)


@pytest.mark.parametrize(
    "sql",
    [
        "MERGE INTO ns.t USING read_csv('/etc/passwd') AS s ON true WHEN MATCHED THEN DELETE",
        "MERGE INTO ns.t USING '/etc/passwd' AS s ON true WHEN MATCHED THEN DELETE",
        (
            "MERGE INTO ns.t USING ns.s ON t.id IN (SELECT 1 FROM read_text('/etc/passwd')) "
            "WHEN MATCHED THEN DELETE"
        ),
        "UPDATE ns.t SET v = 1 FROM read_csv('/etc/passwd') AS s",
    ],
)
def test_sources_that_read_files_are_refused(conn: Any, sql: str) -> None:
    load(conn, TARGET, SOURCE)
    with pytest.raises(errors.NotSupportedError, match="lakehouse tables only"):
        conn.cursor().execute(sql)
    assert files(conn) and sorted(
        conn.cursor().execute("SELECT * FROM ns.t").fetchall(), key=repr
    ) == sorted(TARGET, key=repr)


def test_parameters_in_source_and_clauses(conn: Any) -> None:
    load(conn, TARGET, SOURCE)
    sql = (
        "MERGE INTO ns.t USING (VALUES (?, ?)) AS s(id, v) ON t.id = s.id "
        "WHEN MATCHED AND s.v > ? THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN "
        "INSERT VALUES (s.id, s.v, ?)"
    )
    for params in ([2, 99, 50, "p"], [7, 70, 0, "q"]):
        expected = reference(TARGET, SOURCE, sql.replace("?", "$%d") % (1, 2, 3, 4), params)
        assert ours(conn, sql, params) == expected
        load_again = conn.cursor()
        load_again.execute("DROP TABLE ns.t").execute("DROP TABLE ns.s")
        load(conn, TARGET, SOURCE)


def test_only_files_with_changed_rows_are_rewritten(conn: Any) -> None:
    load(conn, TARGET, SOURCE)
    before = files(conn)
    cur = conn.cursor()
    cur.execute(
        "MERGE INTO ns.t USING (VALUES (2, 200), (8, 80)) AS s(id, v) ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v, 'n')"
    )
    assert cur.rowcount == 2
    after = files(conn)
    assert len(before - after) == 1  # only the file of id 2 was replaced
    assert len(after - before) == 1  # its new content and the new row: one write
    # A match that changes nothing (same values) keeps every file.
    cur.execute("MERGE INTO ns.t USING ns.t AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")
    assert cur.rowcount == 5
    assert files(conn) == after


def test_several_source_rows_for_one_target_row_is_duckdbs_error(conn: Any) -> None:
    source = [*SOURCE, (1, 12, "again")]
    load(conn, TARGET, source)
    before = files(conn)
    sql = "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v"
    expected, _ = reference(TARGET, source, sql)
    with pytest.raises(errors.DataError, match="more than once") as info:
        conn.cursor().execute(sql)
    assert "cannot affect the same target row more than once" in expected
    assert "cannot affect the same target row more than once" in str(info.value)
    assert files(conn) == before
    # The temporary copy is gone, and so are the registered rows.
    duck = conn.session.duckdb()
    assert duck.sql("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchall() == [(0,)]
    assert duck.sql("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchall() == [(0,)]


DUPLICATED = [*SOURCE, (1, -12, "again"), (3, 34, "twice")]


@pytest.mark.parametrize(
    ("sql", "refused"),
    [
        ("MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN DELETE", True),
        ("MERGE INTO ns.t AS x USING ns.s USING (id) WHEN MATCHED THEN UPDATE SET v = 0", True),
        # The condition leaves one action per target row (as in PostgreSQL): allowed.
        (
            (
                "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED AND s.w <> 'again' "
                "AND s.w <> 'twice' THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
            ),
            False,
        ),
        # A duplicate whose first applicable clause is DO NOTHING takes no action.
        (
            (
                "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED AND s.w IN ('again', "
                "'twice') THEN DO NOTHING WHEN MATCHED THEN UPDATE SET w = s.w"
            ),
            False,
        ),
        # Two different actions on one row are two actions.
        (
            (
                "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED AND s.v > 0 THEN "
                "UPDATE SET v = s.v WHEN MATCHED THEN DELETE"
            ),
            True,
        ),
        # Only row 1 has two matches, and neither passes the condition.
        ("MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED AND s.v > 100 THEN DELETE", False),
        # Matches of NOT MATCHED BY SOURCE are one per target row by definition.
        (
            "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE",
            False,
        ),
        # UPDATE ... FROM takes one match per row (PostgreSQL's rule, and DuckDB's): no error.
        ("UPDATE ns.t SET w = s.w FROM ns.s WHERE t.id = s.id AND s.w <> 'again'", False),
    ],
)
def test_the_cardinality_rule_on_every_duckdb_version(conn: Any, sql: str, refused: bool) -> None:
    """The standard's rule holds whether or not DuckDB enforces it (2.0.0 does, 2.0.1 not)."""
    load(conn, TARGET, DUPLICATED)
    before = files(conn)
    expected = reference(TARGET, DUPLICATED, sql)
    assert (expected[0] == CARDINALITY) is refused
    got = ours(conn, sql)
    if refused:
        assert "ns.t cannot affect the same target row more than once" in got[0]
        assert got[1] == sorted(TARGET, key=repr) and files(conn) == before
    else:
        assert got == expected


def test_the_cardinality_rule_binds_parameters_in_conditions(conn: Any) -> None:
    load(conn, TARGET, DUPLICATED)
    sql = "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED AND s.v > ? THEN UPDATE SET v = ?"
    assert ours(conn, sql, [33, 7]) == reference(
        TARGET, DUPLICATED, sql.replace("?", "$%d") % (1, 2), [33, 7]
    )
    with pytest.raises(errors.DataError, match="more than once"):
        conn.cursor().execute(sql, [-100, 7])


def test_merge_in_a_transaction_commits_or_rolls_back_with_it(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    conn = trinity_dbapi.connect(uri, autocommit=True)
    conn.cursor().execute("CREATE NAMESPACE ns")
    load(conn, TARGET, SOURCE)
    conn.autocommit = False
    cur = conn.cursor()
    sql = "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN DELETE"
    cur.execute(sql)
    assert cur.rowcount == 2
    assert cur.execute("SELECT count(*) FROM ns.t").fetchall() == [(2,)]  # its own writes
    conn.rollback()
    assert cur.execute("SELECT count(*) FROM ns.t").fetchall() == [(4,)]
    cur.execute(sql)
    cur.execute("INSERT INTO ns.t VALUES (7, 7, 'g')")
    conn.commit()
    other = trinity_dbapi.connect(uri).cursor()
    assert sorted(other.execute("SELECT id FROM ns.t").fetchall()) == [(2,), (4,), (7,)]


@pytest.mark.parametrize(
    ("sql", "error", "match"),
    [
        (
            "MERGE INTO system.tables USING ns.s ON 1 = 1 WHEN MATCHED THEN DELETE",
            errors.ProgrammingError,
            "read-only",
        ),
        (
            "MERGE INTO ns.nope USING ns.s ON 1 = 1 WHEN MATCHED THEN DELETE",
            errors.NoSuchTableError,
            "ns.nope",
        ),
        (
            "MERGE INTO ns.t USING ns.nope ON 1 = 1 WHEN MATCHED THEN DELETE",
            errors.NoSuchTableError,
            "ns.nope",
        ),
        (
            "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'x'",
            errors.DataError,
            "Could not convert string 'x' to INT32",
        ),
        (
            (
                "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) "
                "VALUES (s.id, 1)"
            ),
            errors.ProgrammingError,
            None,
        ),
        (
            "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN UPDATE SET nope = 1",
            errors.ProgrammingError,
            "nope",
        ),
        (
            "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN DELETE RETURNING *",
            errors.NotSupportedError,
            "RETURNING",
        ),
        (
            (
                "MERGE INTO ns.t FOR SYSTEM_VERSION AS OF 1 USING ns.s ON t.id = s.id "
                "WHEN MATCHED THEN DELETE"
            ),
            errors.ProgrammingError,
            None,
        ),
    ],
)
def test_hostile_statements_give_clear_errors_and_stage_nothing(
    conn: Any, sql: str, error: type[Exception], match: str | None
) -> None:
    load(conn, TARGET, SOURCE)
    before = files(conn)
    with pytest.raises(error, match=match):
        conn.cursor().execute(sql)
    assert files(conn) == before
    assert sorted(conn.cursor().execute("SELECT * FROM ns.t").fetchall(), key=repr) == sorted(
        TARGET, key=repr
    )


def test_statements_parse_to_dml_with_the_target_first() -> None:
    from trinity_dbapi.sql import model
    from trinity_dbapi.sql import statements as sts

    (parsed,) = sts.parse(
        "MERGE INTO ns.t AS x USING (SELECT * FROM ns.s FOR SYSTEM_VERSION AS OF ?) AS y "
        "ON x.id = y.id WHEN MATCHED AND y.v > ? THEN UPDATE SET v = ? "
        "WHEN NOT MATCHED BY SOURCE THEN DELETE"
    )
    stmt = sts.to_statement(parsed, [3, 5, 7])
    assert isinstance(stmt, model.Dml)
    assert [ref.table for ref in stmt.tables] == [
        model.TableName("ns", "t"),
        model.TableName("ns", "s"),
    ]
    assert stmt.tables[1].as_of == model.AsOf("version", 3)
    assert stmt.params == (5, 7)
    with pytest.raises(errors.ProgrammingError, match="FOR SYSTEM_VERSION AS OF applies"):
        sts.to_statement(
            sts.parse(
                "MERGE INTO ns.t FOR SYSTEM_VERSION AS OF 1 USING ns.s ON true "
                "WHEN MATCHED THEN DELETE"
            )[0]
        )
    with pytest.raises(errors.SQLSyntaxError):
        sts.parse("MERGE INTO ns.t USING ns.s ON true WHEN MATCHED THEN ERROR")


def test_a_column_named_rowid_is_refused(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.r (rowid INT4)")
    with pytest.raises(errors.NotSupportedError, match="rowid"):
        cur.execute("MERGE INTO ns.r USING ns.r AS s ON 1 = 1 WHEN MATCHED THEN DELETE")


def test_partitioned_target_and_a_source_of_the_same_table(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.p (day INT4, id INT4, v INT4) PARTITIONED BY (day)")
    cur.execute("INSERT INTO ns.p VALUES (1, 1, 1), (1, 2, 2), (2, 3, 3), (3, 4, 4)")
    cur.execute(
        "MERGE INTO ns.p USING (SELECT day + 1 AS day, id + 10 AS id, v FROM ns.p) AS s "
        "ON p.day = s.day AND p.v = s.v + 1 WHEN MATCHED THEN DELETE "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.day, s.id, s.v)"
    )
    assert cur.rowcount == 4  # (2, 3, 3) and (3, 4, 4) deleted, two source rows inserted
    assert sorted(cur.execute("SELECT * FROM ns.p").fetchall()) == [
        (1, 1, 1),
        (1, 2, 2),
        (2, 11, 1),
        (4, 14, 4),
    ]


_ROWS = st.lists(
    st.tuples(
        st.integers(0, 6), st.one_of(st.none(), st.integers(-3, 3)), st.sampled_from(["a", None])
    ),
    max_size=6,
)
_MATCHED = st.sampled_from(
    [
        "WHEN MATCHED THEN DELETE",
        "WHEN MATCHED AND s.v > 0 THEN UPDATE SET v = s.v",
        "WHEN MATCHED AND t.v IS NULL THEN UPDATE SET w = 'n'",
        "WHEN MATCHED THEN UPDATE SET *",
        "WHEN MATCHED THEN DO NOTHING",
    ]
)
_NOT_MATCHED = st.sampled_from(
    [
        "WHEN NOT MATCHED THEN INSERT *",
        "WHEN NOT MATCHED AND s.v IS NOT NULL THEN INSERT (id, v) VALUES (s.id, s.v * 10)",
        "WHEN NOT MATCHED BY SOURCE THEN DELETE",
        "WHEN NOT MATCHED BY SOURCE AND t.v < 0 THEN UPDATE SET v = 0",
    ]
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    target=_ROWS,
    source=_ROWS,
    clauses=st.lists(st.one_of(_MATCHED, _NOT_MATCHED), min_size=1, max_size=3),
)
def test_random_merges_equal_duckdbs(
    tmp_path_factory: pytest.TempPathFactory, target: Any, source: Any, clauses: list[str]
) -> None:
    conn = trinity_dbapi.connect(str(tmp_path_factory.mktemp("lake")), autocommit=True)
    conn.cursor().execute("CREATE NAMESPACE ns")
    load(conn, target, source)
    sql = "MERGE INTO ns.t USING ns.s ON t.id = s.id " + " ".join(clauses)
    expected = reference(target, source, sql)
    got = ours(conn, sql)
    if isinstance(expected[0], str):
        assert isinstance(got[0], str) and expected[0].split(": ", 1)[-1] in got[0]
        assert got[1] == sorted(target, key=repr)
    else:
        assert got == expected
    conn.close()


@pytest.mark.parametrize(
    ("sql", "read"),
    [
        (
            (
                "MERGE INTO ns.p USING ns.s ON p.day = 2 AND p.id = s.id WHEN MATCHED THEN "
                "UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT VALUES (9, s.id, s.v)"
            ),
            ["day=2"],
        ),
        (
            (
                "MERGE INTO ns.p AS x USING ns.s ON x.id = s.id AND x.day IN (?, 3) "
                "WHEN MATCHED THEN DELETE"
            ),
            ["day=1", "day=3"],
        ),
        (
            (
                "MERGE INTO ns.p USING ns.s ON p.day = 2 AND p.id = s.id "
                "WHEN NOT MATCHED BY SOURCE THEN DELETE"
            ),
            ["day=1", "day=2", "day=3"],  # every row may be one no source row matches
        ),
        ("UPDATE ns.p SET v = s.v FROM ns.s WHERE p.id = s.id AND p.day = 3", ["day=3"]),
    ],
)
def test_the_target_is_pruned_to_the_partitions_the_condition_pins(
    conn: Any, monkeypatch: pytest.MonkeyPatch, sql: str, read: list[str]
) -> None:
    from trinity_dbapi.sql.engine.dml import Target

    rows = [(1, 1, 10), (1, 2, 20), (2, 1, 30), (2, 3, 40), (3, 1, 50)]
    source = [(1, 100, None), (3, 300, None), (5, 500, None)]
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.p (day INT4, id INT4, v INT4) PARTITIONED BY (day)")
    cur.executemany("INSERT INTO ns.p VALUES (?, ?, ?)", [list(r) for r in rows])
    cur.execute("CREATE TABLE ns.s (id INT4, v INT4, w VARCHAR)")
    cur.executemany("INSERT INTO ns.s VALUES (?, ?, ?)", [list(r) for r in source])
    seen: list[str] = []
    original = Target.rows_with_owners

    def recording(self: Target, labels: Any) -> Any:
        seen.extend(labels)
        return original(self, labels)

    monkeypatch.setattr(Target, "rows_with_owners", recording)
    params = [1] if "?" in sql else None
    count = cur.execute(sql, params).rowcount
    got = sorted(cur.execute("SELECT * FROM ns.p").fetchall())
    assert sorted({label.split("/")[0] for label in seen}) == read
    duck = duckdb.connect()
    duck.execute("CREATE SCHEMA ns")
    duck.execute("CREATE TABLE ns.p (day INT4, id INT4, v INT4)")
    duck.executemany("INSERT INTO ns.p VALUES (?, ?, ?)", [list(r) for r in rows])
    duck.execute("CREATE TABLE ns.s (id INT4, v INT4, w VARCHAR)")
    duck.executemany("INSERT INTO ns.s VALUES (?, ?, ?)", [list(r) for r in source])
    assert count == duck.execute(sql, params).fetchall()[0][0]
    assert got == sorted(duck.execute("SELECT * FROM ns.p").fetchall())


def test_rows_keep_their_files_across_many_rows_and_files(conn: Any) -> None:
    # DuckDB runs the copy on several threads: each row must still map to its own file.
    import pyarrow as pa

    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.big (id INT8, f INT8)")
    cur.execute("USE ns")
    for f in range(6):
        ids = pa.array(range(f * 30_000, (f + 1) * 30_000), pa.int64())
        cur.ingest("big", pa.table({"id": ids, "f": pa.array([f] * len(ids), pa.int64())}))
    before = _files_of(conn, "big")
    cur.execute(
        "MERGE INTO big USING (VALUES (45000, -1), (179999, -2), (999999, -3)) AS s(id, f) "
        "ON big.id = s.id WHEN MATCHED THEN UPDATE SET f = s.f WHEN NOT MATCHED THEN INSERT *"
    )
    assert cur.rowcount == 3
    after = _files_of(conn, "big")
    assert len(set(before) - set(after)) == 2  # the files of ids 45000 and 179999
    summary = cur.execute(
        "SELECT f, count(*), min(id), max(id) FROM big GROUP BY f ORDER BY f"
    ).fetchall()
    assert summary[:3] == [(-3, 1, 999999, 999999), (-2, 1, 179999, 179999), (-1, 1, 45000, 45000)]
    assert summary[3:] == [
        (f, 30_000 - (f in (1, 5)), f * 30_000, (f + 1) * 30_000 - 1 - (f == 5)) for f in range(6)
    ]


def _files_of(conn: Any, table: str) -> dict[str, str]:
    definition = conn.lakehouse.begin().load_table("ns", table)
    return managed.metadata(conn.lakehouse.storage, definition).files()


def test_candidate_rows_carry_their_files_position_and_label(conn: Any) -> None:
    # MERGE tracks each candidate row's file by its position in the file list
    # (an int32 column); UPDATE and DELETE by the label decoded from it.
    import pyarrow as pa

    from trinity_dbapi.sql import model
    from trinity_dbapi.sql.engine.dml import LABEL, Target

    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.parts (id INT8)")
    sizes = [3, 0, 5, 1]  # the empty ingest adds no rows to any file
    for start, size in enumerate(sizes):
        ids = pa.array(range(start * 100, start * 100 + size), pa.int64())
        cur.ingest("parts", pa.table({"id": ids}), namespace="ns")
    files = _files_of(conn, "parts")
    labels = sorted(files, key=lambda label: -len(label))  # any order: positions follow it
    target = Target(conn.session, model.TableName("ns", "parts"))
    rows, owners = target.rows_with_owners(labels)
    assert owners.type == pa.int32() and len(owners) == rows.num_rows == 9
    by_file: dict[str, list[int]] = {}
    for owner, row_id in zip(owners.to_pylist(), rows.column("id").to_pylist(), strict=True):
        by_file.setdefault(labels[owner], []).append(row_id)
    assert sorted(sorted(ids) for ids in by_file.values()) == [
        [0, 1, 2],
        [200, 201, 202, 203, 204],
        [300],
    ]
    labelled = target.rows_with_labels(labels)
    assert labelled.column(LABEL).type == pa.string()
    assert labelled.column(LABEL).to_pylist() == [labels[o] for o in owners.to_pylist()]
    assert labelled.drop_columns([LABEL]).equals(rows)
    empty_rows, empty_owners = target.rows_with_owners([])
    assert empty_rows.num_rows == 0 and len(empty_owners) == 0
    assert target.rows_with_labels([]).column_names == ["id", LABEL]


def test_changed_rows_found_by_arrow_equal_the_sql_answer() -> None:
    # Which candidate rows are gone or changed decides which files are rewritten:
    # the Arrow comparison must give exactly the rows IS DISTINCT FROM gives.
    import math

    import pyarrow as pa

    from trinity_dbapi.sql.engine.merge import _ROW, _changed_rows

    nan = math.nan
    rows = pa.table(
        {
            "i": pa.array([1, 2, None, 4, 5, 6, 7, 8], pa.int64()),
            "f": pa.array([0.0, nan, nan, 1.5, None, 2.0, -0.0, nan], pa.float64()),
            "s": pa.array(["a", None, "c", "d", "e", "f", "g", "h"], pa.string()),
            _ROW: pa.array(range(8), pa.int64()),
        }
    )
    # Position 3 is deleted; 8 and 9 are new rows; the rest updated in place.
    now = pa.table(
        {
            _ROW: pa.array([0, 1, 2, 4, 5, 6, 7, 8, 9], pa.int64()),
            "i": pa.array([1, 2, 3, 5, 6, 7, 8, 9, None], pa.int64()),
            "f": pa.array([-0.0, nan, nan, None, 2.0, 0.0, 1.0, nan, None], pa.float64()),
            "s": pa.array(["a", None, "c", "e", None, "g", "h", "x", None], pa.string()),
        }
    )
    names = ["i", "f", "s"]
    got = _changed_rows(rows, now, names)
    assert got is not None
    duck = duckdb.connect()
    duck.register("o", rows)
    duck.register("c", now)
    expected = duck.execute(
        f'SELECT o."{_ROW}" FROM o LEFT JOIN c ON c."{_ROW}" = o."{_ROW}" '
        f'WHERE c."{_ROW}" IS NULL OR row(c.i, c.f, c.s) IS DISTINCT FROM row(o.i, o.f, o.s)'
    ).fetchall()
    assert sorted(got.to_pylist()) == sorted(r[0] for r in expected) == [2, 3, 5, 7]
    # A column Arrow cannot compare, or one DuckDB gave back as another type: the SQL decides.
    lists = pa.list_(pa.int64())
    listed = rows.append_column("l", pa.array([[1]] * 8, lists))
    assert _changed_rows(listed, now.append_column("l", pa.array([[1]] * 9, lists)), ["l"]) is None
    narrow = now.set_column(1, "i", now.column("i").cast(pa.int32()))
    assert _changed_rows(rows, narrow, names) is None
    assert _changed_rows(rows.slice(0, 0), now.slice(0, 0), names).to_pylist() == []
