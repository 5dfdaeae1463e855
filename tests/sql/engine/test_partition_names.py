"""Any legal column name is a partition column, any value a partition value, on every backend.

The layout URL-encodes partition column names and values in directory names
(docs/datasets.md); these tests write and read them back through SQL
(INSERT, SELECT, pruned WHERE, time travel, a fresh connection), with the
local storage read by DuckDB's own Parquet scan and the other backends by
the Arrow dataset, and check that the partition list of a definition is
stored as a list, not as text a name could split.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.format.definitions import (
    PARTITION_COLUMNS,
    PARTITIONED_BY,
    Column,
    DataType,
    TableDefinition,
)
from trinity_dbapi.format.names import new_name_problem
from trinity_dbapi.tables import datasets, managed
from trinity_dbapi.tables.partitions import MAX_NAME_BYTES, MAX_SEGMENT_BYTES

Backend = tuple[str, dict[str, Any]]

#: Names the layout must encode, or that look like parts of the layout.
ODD_NAMES = [
    "a b",
    "a,b",
    "x=y",
    "p/q",
    "%41",
    "100%",
    "é",
    "日本",
    "😀",
    "it's",
    'a"b',
    "1x",
    "a.b",
    "Day",
    "__HIVE_DEFAULT_PARTITION__",
    "a\\b",
    " lead",
    "trail ",
    "a+b",
    "?*[{",
    "..",
    "__trinity_file",
    "a:b",  # a newline was here: new names refuse control characters (format.md)
]
#: Values with the same troubles, the NULL marker and NULL itself.
ODD_VALUES = [
    "a/b",
    "%41",
    "=",
    "x=y/z",
    "é",
    "",
    "__HIVE_DEFAULT_PARTITION__",
    "%5F_HIVE_DEFAULT_PARTITION__",
    None,
    "'",
    "a+b",
    " ",
    "..",
    ".",
    "\\",
]


def q(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def rows(cur: Any, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    return sorted(cur.execute(sql, params).fetchall(), key=repr)


def check_table(conn: Any, table: str, names: list[str], data: list[tuple[Any, ...]]) -> None:
    """Every row back, and a WHERE on each value of the first two partition columns."""
    cur = conn.cursor()
    columns = ", ".join(q(n) for n in names)
    assert rows(cur, f"SELECT {columns} FROM {table}") == sorted(data, key=repr)
    for index, name in enumerate(names[: min(2, len(names) - 1)]):  # the last is the payload
        for value in {row[index] for row in data}:
            expected = sorted((row for row in data if row[index] == value), key=repr)
            if value is None:
                found = rows(cur, f"SELECT {columns} FROM {table} WHERE {q(name)} IS NULL")
            else:
                found = rows(cur, f"SELECT {columns} FROM {table} WHERE {q(name)} = ?", [value])
            assert found == expected, (name, value)


NAME_GROUPS = [ODD_NAMES[i : i + 6] for i in range(0, len(ODD_NAMES), 6)]


@pytest.mark.parametrize("names", NAME_GROUPS, ids=[f"names{i}" for i in range(len(NAME_GROUPS))])
def test_odd_partition_names_and_values_on_every_backend(
    backend: Backend, names: list[str]
) -> None:
    uri, options = backend
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    text, number, payload = names[0], names[1], names[2]
    more = names[3:]
    declared = ", ".join(
        [f"{q(text)} VARCHAR", f"{q(number)} INT8", *(f"{q(n)} INT4" for n in more)]
    )
    partitioned = ", ".join(q(n) for n in [text, number, *more])
    cur.execute(f"CREATE TABLE ns.t ({declared}, {q(payload)} INT8) PARTITIONED BY ({partitioned})")
    order = [text, number, *more, payload]
    first = [(v, i % 3 if i % 4 else None, *(i for _ in more), i) for i, v in enumerate(ODD_VALUES)]
    placeholders = ", ".join("?" for _ in order)
    insert = f"INSERT INTO ns.t ({', '.join(q(n) for n in order)}) VALUES ({placeholders})"
    cur.executemany(insert, first)
    version = conn.lakehouse.latest_version()
    check_table(conn, "ns.t", order, first)
    second = [("later", 7, *(100 for _ in more), 100)]
    cur.executemany(insert, second)
    check_table(conn, "ns.t", order, first + second)
    columns = ", ".join(q(n) for n in order)
    old = rows(cur, f"SELECT {columns} FROM ns.t FOR SYSTEM_VERSION AS OF {version}")
    assert old == sorted(first, key=repr)
    # A range on a partition column (left to DuckDB) and a pruned IN list.
    assert rows(cur, f"SELECT {q(payload)} FROM ns.t WHERE {q(number)} > 1") == sorted(
        ((row[-1],) for row in first + second if row[1] is not None and row[1] > 1), key=repr
    )
    found = rows(cur, f"SELECT {q(payload)} FROM ns.t WHERE {q(text)} IN (?, ?)", ["a/b", "="])
    assert found == [(0,), (2,)]
    reopened = trinity_dbapi.connect(uri, storage_options=options, create=False)
    check_table(reopened, "ns.t", order, first + second)
    # The catalog and SHOW CREATE TABLE give the list back name by name.
    listed = rows(cur, "SELECT partition_columns FROM system.tables WHERE table_name = 't'")
    assert listed == [([text, number, *more],)]
    shown = cur.execute("SHOW CREATE TABLE ns.t").fetchall()[0][0]
    cur.execute(shown.replace('"ns"."t"', '"ns"."copy"', 1))
    copy = conn.lakehouse.begin().load_table("ns", "copy")
    assert copy.partition_columns == [text, number, *more]
    reopened.close()
    conn.close()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    name=st.text(
        st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp")),
        min_size=1,
        max_size=30,
    ).filter(lambda name: new_name_problem(name) is None),  # the names a table may take
    values=st.lists(
        st.none() | st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
        min_size=1,
        max_size=4,
    ),
)
@example(  # found by CI: a directory name of 256 bytes
    name="000000::" + "\u00a1" * 14 + "\U00010000" * 4,
    values=["::" + "\x80" * 8 + "\u0800" + "\U00010000" * 4],
)
@example(name="\U00010000" * 30, values=["x"])  # a name leaving no room for values
def test_any_name_and_value_round_trip_through_duckdb(
    tmp_path_factory: pytest.TempPathFactory, name: str, values: list[str | None]
) -> None:
    # Local storage: DuckDB's own Parquet scan, the path hive directories broke.
    payload = "v" if name.casefold() != "v" else "w"
    conn = trinity_dbapi.connect(str(tmp_path_factory.mktemp("lake")), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    create = f"CREATE TABLE ns.t ({q(name)} VARCHAR, {payload} INT8) PARTITIONED BY ({q(name)})"
    encoded = len(quote(name, safe=""))
    if encoded > MAX_NAME_BYTES:  # no room left for values: refused when the table is made
        with pytest.raises(errors.ProgrammingError, match=f"more than the {MAX_NAME_BYTES}"):
            cur.execute(create)
        return
    cur.execute(create)
    data = [(value, i) for i, value in enumerate(values)]
    segments = [encoded + 1 + len(quote(v, safe="")) for v in values if v is not None]
    if max(segments, default=0) > MAX_SEGMENT_BYTES:  # one directory name too long: nothing stored
        with pytest.raises(errors.DataError, match=f"more than {MAX_SEGMENT_BYTES}"):
            cur.executemany("INSERT INTO ns.t VALUES (?, ?)", data)
        assert cur.execute("SELECT count(*) FROM ns.t").fetchall() == [(0,)]
        return
    cur.executemany("INSERT INTO ns.t VALUES (?, ?)", data)
    check_table(conn, "ns.t", [name, payload], data)
    conn.close()


def test_a_comma_joined_definition_of_an_older_version_still_reads(tmp_path: Path) -> None:
    # Definitions written before the JSON list held "partitioned_by": "day,shop".
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    lakehouse = conn.lakehouse
    old = TableDefinition(
        "t",
        (
            Column(1, "day", DataType("int4"), True),
            Column(2, "shop", DataType.varchar(10), True),
            Column(3, "v", DataType("int8"), True),
        ),
        table_format=managed.TABLE_FORMAT,
        format_properties={PARTITIONED_BY: "day,shop"},
    )
    with lakehouse.begin() as txn:
        txn.create_table("ns", datasets.create_dataset(lakehouse.storage, old))
    assert PARTITION_COLUMNS not in lakehouse.begin().load_table("ns", "t").format_properties
    cur.execute("INSERT INTO ns.t VALUES (1, 'a/b', 10), (2, NULL, 20)")
    assert rows(cur, "SELECT * FROM ns.t") == [(1, "a/b", 10), (2, None, 20)]
    assert rows(cur, "SELECT v FROM ns.t WHERE shop = 'a/b'") == [(10,)]
    labels = managed.metadata(lakehouse.storage, lakehouse.begin().load_table("ns", "t")).files()
    assert sorted(label.rpartition("/")[0] for label in labels) == [
        "day=1/shop=a%2Fb",
        "day=2/shop=__HIVE_DEFAULT_PARTITION__",
    ]
    listed = rows(cur, "SELECT partition_columns FROM system.tables WHERE table_name = 't'")
    assert listed == [(["day", "shop"],)]
    # A hand-written list with spaces reads as the catalog always read it.
    spaced = old.replace(format_properties={PARTITIONED_BY: "day, shop"})
    assert spaced.partition_columns == ["day", "shop"]
    conn.close()


def test_the_partition_list_is_stored_as_a_json_list(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute('CREATE TABLE ns.t ("a,b" INT4, "c" INT4, v INT4) PARTITIONED BY ("a,b", c)')
    definition = conn.lakehouse.begin().load_table("ns", "t")
    properties = definition.format_properties
    assert json.loads(properties[PARTITION_COLUMNS]) == ["a,b", "c"]
    assert PARTITIONED_BY not in properties
    cur.execute("INSERT INTO ns.t VALUES (1, 2, 3)")
    assert rows(cur, 'SELECT "a,b", c, v FROM ns.t') == [(1, 2, 3)]
    conn.close()


def test_a_corrupt_partition_list_is_a_corrupt_file_naming_the_table() -> None:
    table = TableDefinition(
        "t",
        (Column(1, "a", DataType("int4"), True),),
        table_format=managed.TABLE_FORMAT,
        format_properties={PARTITION_COLUMNS: '["a", 1]'},
    )
    with pytest.raises(errors.CorruptFileError, match=r"table t.*partition_columns"):
        _ = table.partition_columns


def test_names_up_to_the_directory_limit(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    longest = "é" * (MAX_NAME_BYTES // 6)  # six bytes each URL-encoded
    cur.execute(f"CREATE TABLE ns.t ({q(longest)} INT2, v INT2) PARTITIONED BY ({q(longest)})")
    cur.execute("INSERT INTO ns.t VALUES (NULL, 1), (-32768, 2)")
    assert rows(cur, f"SELECT {q(longest)}, v FROM ns.t") == [(-32768, 2), (None, 1)]
    too_long = "x" * (MAX_NAME_BYTES + 1)
    with pytest.raises(errors.ProgrammingError, match=f"more than the {MAX_NAME_BYTES}"):
        cur.execute(
            f"CREATE TABLE ns.u ({q(too_long)} INT2, v INT2) PARTITIONED BY ({q(too_long)})"
        )
    assert rows(cur, "SELECT table_name FROM system.tables") == [("t",)]
    conn.close()


def test_columns_differing_only_in_case_are_refused(tmp_path: Path) -> None:
    # DuckDB matches names case-insensitively: it read "A"'s values for "a".
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    with pytest.raises(errors.ProgrammingError, match="differ only in case"):
        cur.execute('CREATE TABLE ns.t ("Day" INT4, "day" INT4, v INT4) PARTITIONED BY ("day")')
    with pytest.raises(errors.ProgrammingError, match="differ only in case"):
        cur.execute('CREATE TABLE ns.t PARTITIONED BY ("X") AS SELECT 1 AS "X", 2 AS x')
    cur.execute('CREATE TABLE ns.t ("Day" INT4, v INT4) PARTITIONED BY ("Day")')
    with pytest.raises(errors.ProgrammingError, match="differ only in case"):
        cur.execute("ALTER TABLE ns.t ADD COLUMN day INT4")
    with pytest.raises(errors.ProgrammingError, match="differ only in case"):
        cur.execute("ALTER TABLE ns.t RENAME COLUMN v TO DAY")
    cur.execute("INSERT INTO ns.t VALUES (1, 2), (3, 4)")
    assert rows(cur, 'SELECT "Day", v FROM ns.t WHERE "Day" = 3') == [(3, 4)]
    assert rows(cur, "SELECT v FROM ns.t WHERE day = 1") == [(2,)]  # unquoted: any case
    conn.close()


def test_directories_named_like_partitions_above_the_root_are_not_columns(
    tmp_path: Path,
) -> None:
    # DuckDB's hive partitioning read "v=9" in the root's path as column v.
    root = tmp_path / "v=9" / "p=8" / "lake"
    conn = trinity_dbapi.connect(str(root), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (v INT8, w INT8)")
    cur.execute("INSERT INTO ns.t VALUES (1, 2)")
    cur.execute("CREATE TABLE ns.u (p INT8, v INT8) PARTITIONED BY (p)")
    cur.execute("INSERT INTO ns.u VALUES (1, 2)")
    assert rows(cur, "SELECT * FROM ns.t") == [(1, 2)]
    assert rows(cur, "SELECT * FROM ns.u") == [(1, 2)]
    assert rows(cur, "SELECT v FROM ns.u WHERE p = 1") == [(2,)]
    conn.close()


@pytest.mark.parametrize("name", [".", "a.b", "..", "[0]"])
def test_a_partition_column_named_like_a_field_path(tmp_path: Path, name: str) -> None:
    """Arrow reads a sort key name as a field path; the writer sorts by position."""
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute(f"CREATE TABLE ns.t ({q(name)} VARCHAR, v INT8) PARTITIONED BY ({q(name)})")
    data = [(None, 0), ("b", 1), ("a", 2), ("b", 3)]
    cur.executemany("INSERT INTO ns.t VALUES (?, ?)", data)
    check_table(conn, "ns.t", [name, "v"], data)
    conn.close()
