"""Spark's pushed filters narrow a catalog table read: the scope, its rows, and its reads.

No JVM: the scope derivation is a pure function, and the data source's
reader is driven as Spark's planner drives it (``reader()``, then
``pushFilters``, then ``partitions()``), in this process, so storage reads
are recorded per path. The Spark round trip is in tests/spark/test_catalog.py.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from trinity_dbapi.storage.cache import shared_cache

pytest.importorskip("pyspark")

from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    In,
    IsNull,
    Not,
    StringEndsWith,
    StringStartsWith,
)

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.format.keys import namespace_key, table_key
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.catalog import CATALOG_TABLES, catalog_table
from trinity_dbapi.lakehouse.catalog_scope import EVERYTHING, CatalogScope
from trinity_dbapi.spark.catalog_filters import catalog_scope
from trinity_dbapi.spark.source import TrinityLakeDataSource
from trinity_dbapi.storage.local import LocalStorage

NAMESPACES = ("n0", "n1", "n2")
PER_NAMESPACE = 20


# -- the pure function ---------------------------------------------------------------------


def test_equal_in_and_prefix_on_name_columns() -> None:
    scope = catalog_scope(
        "information_schema",
        "columns",
        [EqualTo(("table_schema",), "n1"), EqualTo(("table_name",), "t01")],
    )
    assert scope == CatalogScope(namespaces=frozenset({"n1"}), tables=frozenset({"t01"}))
    scope = catalog_scope(
        "system",
        "tables",
        [
            In(("namespace_name",), ("n0", "n1")),
            In(("NAMESPACE_NAME",), ("n1", "n2")),  # both hold: the intersection
            StringStartsWith(("table_name",), "t0"),
            StringStartsWith(("table_name",), "t01"),  # the longer prefix
            EqualNullSafe(("table_name",), "t011"),
        ],
    )
    assert scope == CatalogScope(
        namespaces=frozenset({"n1"}), tables=frozenset({"t011"}), table_prefix="t01"
    )


@pytest.mark.parametrize(
    "pushed",
    [
        Not(EqualTo(("namespace_name",), "n1")),
        GreaterThan(("namespace_name",), "n1"),
        StringEndsWith(("table_name",), "1"),
        StringStartsWith(("namespace_name",), "n"),  # no namespace ranges
        IsNull(("table_name",)),
        EqualTo(("namespace_name", "x"), "n1"),  # a nested field
        EqualTo(("namespace_name",), 1),
        EqualNullSafe(("namespace_name",), None),
        In(("namespace_name",), ("n1", None)),
        In(("namespace_name",), ()),
        EqualTo(("comment",), "n1"),  # not a name column
    ],
    ids=repr,
)
def test_anything_else_narrows_nothing(pushed: Filter) -> None:
    assert catalog_scope("system", "tables", [pushed]) == EVERYTHING


def test_tables_without_name_columns() -> None:
    name = [EqualTo(("table_name",), "t01")]
    assert catalog_scope("system", "versions", name, frozenset({"n1"})) == EVERYTHING
    assert catalog_scope("system", "namespaces", name) == EVERYTHING  # no table column
    schema = [EqualTo(("schema_name",), "n1")]
    assert catalog_scope("information_schema", "schemata", schema) == CatalogScope(
        namespaces=frozenset({"n1"})
    )


def test_the_namespaces_option_restricts_too() -> None:
    only = frozenset({"n1", "n2"})
    assert catalog_scope("system", "columns", [], only) == CatalogScope(namespaces=only)
    both = catalog_scope("system", "columns", [In(("namespace_name",), ("n0", "n2"))], only)
    assert both == CatalogScope(namespaces=frozenset({"n2"}))


# -- against a lakehouse -------------------------------------------------------------------


def _table(i: int) -> TableDefinition:
    return TableDefinition(
        f"t{i:02d}",
        [Column(1, "id", DataType("int8")), Column(2, "v", DataType.varchar(8))],
        table_format="parquet",
    )


@pytest.fixture(scope="module")
def lake_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("spark-catalog") / "lake")
    # A small tree (4 children, 4 buffered messages per node): point lookups show.
    lake = Lakehouse.create(path, order=4, node_file_max_size_bytes=1616 + 4 * 430)
    with lake.begin() as txn:
        for ns in NAMESPACES:
            txn.create_namespace(ns, {"comment": ns})
    for ns in NAMESPACES:
        for i in range(0, PER_NAMESPACE, 5):
            with lake.begin() as txn:
                for j in range(i, i + 5):
                    txn.create_table(ns, _table(j))
    assert lake.snapshot().depth() >= 3
    return path


def _holds(pushed: Filter, row: dict[str, Any]) -> bool:
    """Spark's evaluation of one pushed filter (NULL is false)."""
    if isinstance(pushed, Not):
        return not _holds(pushed.child, row)
    value = row[pushed.attribute[0]]
    if isinstance(pushed, EqualTo):
        return value is not None and value == pushed.value
    if isinstance(pushed, In):
        return value in pushed.value
    if isinstance(pushed, StringStartsWith):
        return value is not None and value.startswith(pushed.value)
    raise AssertionError(pushed)


FILTER_SETS: list[list[Filter]] = [
    [EqualTo(("{ns}",), "n1"), EqualTo(("{table}",), "t03")],
    [In(("{ns}",), ("n0", "n2", "zz")), StringStartsWith(("{table}",), "t1")],
    [StringStartsWith(("{table}",), "t0"), Not(EqualTo(("{ns}",), "n0"))],
    [EqualTo(("{table}",), "nope")],
    [EqualTo(("{ns}",), "system")],
]


def _filters(template: Iterable[Filter], ns: str, table: str) -> list[Filter]:
    def fill(f: Filter) -> Filter:
        if isinstance(f, Not):
            return Not(fill(f.child))
        column = f.attribute[0].format(ns=ns, table=table)
        return type(f)((column,), f.value)  # type: ignore[call-arg, attr-defined]

    return [fill(f) for f in template]


@pytest.mark.parametrize("name", sorted(CATALOG_TABLES), ids="{0[0]}.{0[1]}".format)
def test_scoped_rows_match_the_full_build(lake_path: str, name: tuple[str, str]) -> None:
    """The oracle: filters applied to the full table give what they give on the scoped one."""
    from trinity_dbapi.lakehouse.catalog_scope import NAME_COLUMNS

    namespace, table = name
    ns_column, table_column = NAME_COLUMNS.get(name, ("namespace_name", "table_name"))
    # No name columns: filters on them are moot, and no scope narrows the rows.
    unscoped = {("system", "versions"): "version", ("system", "refs"): "ref_name"}
    if name in unscoped:
        ns_column = table_column = unscoped[name]
    lake = Lakehouse.open(lake_path)
    txn = lake.begin(read_only=True)
    full = catalog_table(txn, txn.snapshot, namespace, table).to_pylist()
    for template in FILTER_SETS:
        if table_column is None and any(
            "{table}" in str(getattr(f, "child", f).attribute[0]) for f in template
        ):
            continue
        filters = _filters(template, ns_column, table_column or ns_column)
        scope = catalog_scope(namespace, table, filters)
        scoped = catalog_table(txn, txn.snapshot, namespace, table, scope).to_pylist()
        if name in unscoped:
            assert scoped == full
            continue
        expected = [row for row in full if all(_holds(f, row) for f in filters)]
        assert [row for row in scoped if all(_holds(f, row) for f in filters)] == expected


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every path a local storage reads in this process."""
    seen: list[str] = []
    original = LocalStorage._read

    def counting(self: LocalStorage, path: str) -> bytes:
        seen.append(path)
        return original(self, path)

    monkeypatch.setattr(LocalStorage, "_read", counting)
    yield seen


def _plan(
    lake_path: str, path: str, filters: list[Filter], recorded: list[str], **options: str
) -> Any:
    """What Spark's planner does with the data source: the reader, filters, partitions.

    ``recorded`` is cleared after ``schema()``, which Spark calls in another process.
    """
    source = TrinityLakeDataSource({"uri": lake_path, "path": path, **options})
    schema = source.schema()
    recorded.clear()
    reader = source.reader(schema)
    returned = list(reader.pushFilters(filters))
    assert returned == filters  # Spark evaluates every one of them itself
    partitions = reader.partitions()
    assert len(partitions) == 1
    return reader, partitions[0]


def test_a_point_read_reads_one_definition(lake_path: str, recorded: list[str]) -> None:
    shared_cache().clear()  # the task's reads as a fresh executor makes them
    lake = Lakehouse.open(lake_path)
    txn = lake.begin(read_only=True)
    limits = txn.snapshot.definition.key_limits
    wanted = txn.get(table_key("n1", "t07", limits))
    definitions = {
        txn.get(table_key(ns, f"t{i:02d}", limits))
        for ns in NAMESPACES
        for i in range(PER_NAMESPACE)
    } | {txn.get(namespace_key(ns, limits)) for ns in NAMESPACES}
    depth = txn.snapshot.depth()

    filters = [EqualTo(("table_schema",), "n1"), EqualTo(("table_name",), "t07")]
    reader, partition = _plan(lake_path, "information_schema.columns", filters, recorded)
    assert [p for p in recorded if p in definitions] == [wanted]
    # Opening the lakehouse (hint, root, its definition), one tree path, one definition.
    assert len(recorded) <= 3 + depth + 1, recorded
    rows = partition.value.to_pylist()
    # The catalog tables' own rows are always built too; Spark filters them out.
    user = [r for r in rows if r["table_schema"] not in ("system", "information_schema")]
    assert [(r["table_schema"], r["table_name"], r["column_name"]) for r in user] == [
        ("n1", "t07", "id"),
        ("n1", "t07", "v"),
    ]
    batches = list(reader.read(partition))
    assert sum(b.num_rows for b in batches) == len(rows)
    # Spark pickles the reader into its tasks: the driver's transaction stays behind.
    assert pickle.loads(pickle.dumps(reader))._view is None


def test_the_namespaces_option(lake_path: str, recorded: list[str]) -> None:
    _, partition = _plan(lake_path, "system.tables", [], recorded, namespaces='["n2"]')
    assert {r["namespace_name"] for r in partition.value.to_pylist()} == {"n2"}
    assert not [p for p in recorded if "table-" in p and p.endswith(".binpb")][PER_NAMESPACE:]
    _, partition = _plan(lake_path, "system.namespaces", [], recorded, namespaces="n0, n2")
    assert [r["namespace_name"] for r in partition.value.to_pylist()] == ["n0", "n2"]
    _, partition = _plan(lake_path, "system.tables", [], recorded, namespaces="[]")
    assert partition.value.num_rows == 0
    with pytest.raises(ProgrammingError, match="catalog tables"):
        TrinityLakeDataSource({"uri": lake_path, "path": "n1.t01", "namespaces": "n1"}).schema()
    with pytest.raises(ProgrammingError, match="JSON list"):
        TrinityLakeDataSource(
            {"uri": lake_path, "path": "system.tables", "namespaces": "[1]"}
        ).schema()


def test_schema_builds_no_rows(lake_path: str, recorded: list[str], tmp_path: Path) -> None:
    lake = Lakehouse.open(lake_path)
    txn = lake.begin(read_only=True)
    limits = txn.snapshot.definition.key_limits
    definitions = {txn.get(table_key("n0", f"t{i:02d}", limits)) for i in range(PER_NAMESPACE)}
    recorded.clear()
    source = TrinityLakeDataSource({"uri": lake_path, "path": "system.columns"})
    assert [f.name for f in source.schema().fields][:3] == [
        "namespace_name",
        "table_name",
        "column_name",
    ]
    assert not definitions & set(recorded)
