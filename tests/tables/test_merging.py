"""The three-way, file-by-file merge of a managed table (tables/merging.py), as MERGE BRANCH calls it.

Three states of one table on one lakehouse, without branches: the base is
version n; the source is what some statements make of it; then
``CALL system.rollback_to_version(n)`` and other statements make the target.
The three definitions are read at those versions, the registered hook merges
them in a transaction on the latest version, and the merged definition is
committed: its rows are the expected union and difference, each conflict
names the file or column and why, and the merged table passes the
integrity check (every file it reaches reads) and a fresh process's read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.lakehouse.table_formats import MergedTable, table_merge_of
from trinity_dbapi.tables import file_facts, indices, managed
from trinity_dbapi.tables.merging import LAST_COLUMN_ID


class Lake:
    """A lakehouse with table ``ns.t`` and the means to merge two of its histories."""

    def __init__(self, root: Path) -> None:
        self.uri = str(root / "lake")
        self.conn = trinity_dbapi.connect(self.uri, autocommit=True)
        self.cur = self.conn.cursor()
        self.cur.execute("CREATE NAMESPACE ns")

    @property
    def lakehouse(self) -> Any:
        return self.conn.lakehouse

    def run(self, *statements: str) -> int:
        for statement in statements:
            self.cur.execute(statement)
        return int(self.lakehouse.latest_version())

    def rows(self, sql: str = "SELECT * FROM ns.t") -> list[tuple[Any, ...]]:
        return sorted(self.cur.execute(sql).fetchall(), key=repr)

    def definition(self, version: int) -> Any:
        txn = self.lakehouse.begin(version=version, read_only=True)
        return txn.load_table("ns", "t")

    def merge(
        self, setup: Sequence[str], source: Sequence[str], target: Sequence[str]
    ) -> MergedTable:
        """Merge ``source``'s changes into ``target``'s, both made from ``setup``'s state."""
        base = self.run(*setup)
        theirs = self.run(*source)
        self.run(f"CALL system.rollback_to_version({base})")
        ours = self.run(*target)
        hook = table_merge_of(managed.TABLE_FORMAT)
        assert hook is not None
        txn = self.lakehouse.begin()
        result = hook(txn, self.definition(base), self.definition(theirs), self.definition(ours))
        if result.definition is not None:
            txn.replace_table("ns", result.definition)
            txn.commit()
        else:
            txn.abort()
        return result

    def check(self) -> None:
        """The merged version passes the integrity check; a fresh process reads the same rows."""
        self.cur.execute("CALL system.check_integrity()")
        assert self.cur.fetchall() == [(None, None, "ok")]
        managed.forget_metadata()
        fresh = trinity_dbapi.connect(self.uri).cursor()
        rows = sorted(fresh.execute("SELECT * FROM ns.t").fetchall(), key=repr)
        assert rows == self.rows()
        count = fresh.execute("SELECT count(*) FROM ns.t").fetchone()
        assert count == (len(rows),)


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    return Lake(tmp_path)


SETUP = (
    "CREATE TABLE ns.t (id INT8, v VARCHAR)",
    "INSERT INTO ns.t VALUES (1, 'a')",
    "INSERT INTO ns.t VALUES (2, 'b')",
)


def test_appends_on_both_sides_keep_both(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["INSERT INTO ns.t VALUES (3, 's')"],
        ["INSERT INTO ns.t VALUES (4, 't')", "INSERT INTO ns.t VALUES (5, 't')"],
    )
    assert result.conflicts == ()
    assert lake.rows() == [(1, "a"), (2, "b"), (3, "s"), (4, "t"), (5, "t")]
    lake.check()
    # Every file's rows recorded (count(*) and system.data_files read no data file).
    meta = managed.metadata(lake.lakehouse.storage, lake.definition(lake.run()))
    facts = file_facts.recorded(meta)
    assert sorted(facts) == sorted(meta.files().values())
    assert sum(rows for rows, _, _ in facts.values()) == 5


@pytest.mark.filterwarnings("ignore")  # plateau's and minimalkv's deprecations
def test_plateau_reads_the_merged_table(lake: Lake) -> None:
    eager = pytest.importorskip(
        "plateau.io.eager", reason="plateau (the test extra) is not installed"
    )
    minimalkv = pytest.importorskip("minimalkv", reason="minimalkv comes with plateau")
    lake.merge(
        (*SETUP, "CREATE INDEX by_v ON ns.t (v)"),
        ["INSERT INTO ns.t VALUES (3, 's')", "DELETE FROM ns.t WHERE id = 1"],
        ["INSERT INTO ns.t VALUES (4, 't')"],
    )
    uuid = lake.definition(lake.run()).format_properties[managed.DATASET_UUID]
    store = minimalkv.get_store_from_url(f"hfs://{lake.uri}")
    frame = eager.read_table(dataset_uuid=uuid, store=store)
    assert sorted(frame["id"].tolist()) == [2, 3, 4]
    found = eager.read_table(dataset_uuid=uuid, store=store, predicates=[[("v", "==", "t")]])
    assert found["id"].tolist() == [4]


def test_deletes_and_updates_on_one_side_with_appends_on_the_other(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["DELETE FROM ns.t WHERE id = 1", "UPDATE ns.t SET v = 'B' WHERE id = 2"],
        ["INSERT INTO ns.t VALUES (3, 't')"],
    )
    assert result.conflicts == ()
    assert lake.rows() == [(2, "B"), (3, "t")]
    lake.check()


def test_a_file_rewritten_on_both_sides_is_a_conflict_naming_it(lake: Lake) -> None:
    base = lake.run(*SETUP)
    meta = managed.metadata(lake.lakehouse.storage, lake.definition(base))
    first = next(path for path in meta.files().values())  # the file holding id 1
    result = lake.merge(
        [],
        ["UPDATE ns.t SET v = 'S' WHERE id = 1", "INSERT INTO ns.t VALUES (3, 's')"],
        ["DELETE FROM ns.t WHERE id = 1"],
    )
    assert result.definition is None
    assert result.conflicts == (f"file {first!r} was rewritten or deleted on both sides",)
    assert lake.rows() == [(2, "b")]  # nothing changed: the target as it was


def test_merge_is_deterministic(lake: Lake) -> None:
    base = lake.run(*SETUP)
    theirs = lake.run("INSERT INTO ns.t VALUES (3, 's')", "DELETE FROM ns.t WHERE id = 1")
    lake.run(f"CALL system.rollback_to_version({base})")
    ours = lake.run("INSERT INTO ns.t VALUES (4, 't')", "INSERT INTO ns.t VALUES (5, 't')")
    hook = table_merge_of(managed.TABLE_FORMAT)
    assert hook is not None
    definitions = [lake.definition(v) for v in (base, theirs, ours)]
    storage = lake.lakehouse.storage
    files = []
    for _ in range(2):
        merged = hook(lake.lakehouse.begin(), *definitions).definition
        assert merged is not None
        files.append(list(managed.metadata(storage, merged).files().values()))
    assert files[0] == files[1]
    target_files = list(managed.metadata(storage, definitions[2]).files().values())
    source_files = list(managed.metadata(storage, definitions[1]).files().values())
    # The target's files in its order, then the source's new one.
    assert files[0] == [*target_files[1:], source_files[-1]]


def test_a_column_added_on_one_side_is_taken(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["ALTER TABLE ns.t ADD COLUMN n INT4", "INSERT INTO ns.t VALUES (3, 's', 30)"],
        ["INSERT INTO ns.t VALUES (4, 't')", "ALTER TABLE ns.t SET PROPERTIES ('p' = 'x')"],
    )
    assert result.conflicts == ()
    merged = result.definition
    assert merged is not None
    assert [(c.id, c.name) for c in merged.columns] == [(1, "id"), (2, "v"), (3, "n")]
    assert merged.properties["p"] == "x"
    assert merged.format_properties[LAST_COLUMN_ID] == "3"
    assert lake.rows() == [(1, "a", None), (2, "b", None), (3, "s", 30), (4, "t", None)]
    lake.check()


def test_the_same_column_added_on_both_sides_is_fine(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["ALTER TABLE ns.t ADD COLUMN n INT4", "INSERT INTO ns.t VALUES (3, 's', 30)"],
        ["ALTER TABLE ns.t ADD COLUMN n INT4", "INSERT INTO ns.t VALUES (4, 't', 40)"],
    )
    assert result.conflicts == ()
    assert lake.rows() == [(1, "a", None), (2, "b", None), (3, "s", 30), (4, "t", 40)]
    lake.check()


def test_different_columns_under_one_id_are_a_conflict(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["ALTER TABLE ns.t ADD COLUMN n INT4"],
        ["ALTER TABLE ns.t ADD COLUMN m VARCHAR"],
    )
    assert result.definition is None
    assert result.conflicts == (
        (
            "column ID 3 was added as 'n' int4 on the source and as 'm' varchar on the target: "
            "the Parquet files of each side hold different columns under that ID"
        ),
    )


def test_one_name_under_two_ids_is_a_conflict(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["ALTER TABLE ns.t ADD COLUMN x INT4", "ALTER TABLE ns.t ADD COLUMN n INT4"],
        ["ALTER TABLE ns.t ADD COLUMN n INT4"],
    )
    assert result.definition is None
    # ID 3 is 'x' on the source and 'n' on the target; 'n' is ID 4 on the source.
    assert any("column ID 3 was added as 'x' int4" in c for c in result.conflicts)
    assert (
        "column 'n' was added (or renamed) on both sides with different column IDs (3, 4): "
        "each side's Parquet files name it by its own ID"
    ) in result.conflicts


def test_a_column_dropped_on_one_side_and_altered_on_the_other_is_a_conflict(lake: Lake) -> None:
    result = lake.merge(
        [
            "CREATE TABLE ns.t (id INT8, v VARCHAR, n INT4)",
            "INSERT INTO ns.t VALUES (1, 'a', 10)",
        ],
        ["ALTER TABLE ns.t DROP COLUMN n"],
        ["ALTER TABLE ns.t ALTER COLUMN n TYPE INT8"],
    )
    assert result.conflicts == (
        "column 'n' (ID 3) was dropped on the source and altered on the target",
    )


def test_a_column_dropped_on_one_side_drops_it_from_the_others_rows(lake: Lake) -> None:
    result = lake.merge(
        [
            "CREATE TABLE ns.t (id INT8, v VARCHAR, n INT4)",
            "INSERT INTO ns.t VALUES (1, 'a', 10)",
        ],
        ["ALTER TABLE ns.t DROP COLUMN n", "INSERT INTO ns.t VALUES (2, 's')"],
        ["INSERT INTO ns.t VALUES (3, 't', 30)"],
    )
    assert result.conflicts == ()
    assert lake.rows() == [(1, "a"), (2, "s"), (3, "t")]
    lake.check()


def test_properties_merge_key_by_key(lake: Lake) -> None:
    result = lake.merge(
        [*SETUP, "ALTER TABLE ns.t SET PROPERTIES ('keep' = '1', 'gone' = '1')"],
        [
            "ALTER TABLE ns.t SET PROPERTIES ('a' = 's', 'keep' = '2')",
            "INSERT INTO ns.t VALUES (3, 's')",
        ],
        ["ALTER TABLE ns.t UNSET PROPERTIES ('gone')", "INSERT INTO ns.t VALUES (4, 't')"],
    )
    assert result.definition is not None
    props = {k: v for k, v in result.definition.properties.items() if k in ("a", "keep", "gone")}
    assert props == {"a": "s", "keep": "2"}


def test_a_property_changed_differently_on_both_sides_is_a_conflict(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["ALTER TABLE ns.t SET PROPERTIES ('owner' = 'ann')"],
        ["ALTER TABLE ns.t SET PROPERTIES ('owner' = 'bob')"],
    )
    assert result.conflicts == (
        (
            "table property 'owner' was changed on both sides (to 'ann' on the source, "
            "'bob' on the target)"
        ),
    )


PARTITIONED = (
    "CREATE TABLE ns.t (id INT8, k VARCHAR) PARTITIONED BY (k)",
    "INSERT INTO ns.t VALUES (1, 'x'), (2, 'y')",
)


def test_partitioning_changed_on_one_side_keeps_the_others_files(lake: Lake) -> None:
    result = lake.merge(
        PARTITIONED,
        ["ALTER TABLE ns.t SET PARTITIONED BY ()", "INSERT INTO ns.t VALUES (3, 'z')"],
        ["INSERT INTO ns.t VALUES (4, 'x')", "DELETE FROM ns.t WHERE id = 2"],
    )
    assert result.conflicts == ()
    assert result.definition is not None
    assert result.definition.partition_columns == []
    assert lake.rows() == [(1, "x"), (3, "z"), (4, "x")]
    assert lake.rows("SELECT id FROM ns.t WHERE k = 'x'") == [(1,), (4,)]
    lake.check()


def test_partitioning_changed_differently_on_both_sides_is_a_conflict(lake: Lake) -> None:
    result = lake.merge(
        ["CREATE TABLE ns.t (id INT8, k VARCHAR, j VARCHAR)"],
        ["ALTER TABLE ns.t SET PARTITIONED BY (k)"],
        ["ALTER TABLE ns.t SET PARTITIONED BY (j)"],
    )
    assert result.conflicts == (
        "its partitioning was changed on both sides (to ['k'] on the source, ['j'] on the target)",
    )


def test_files_the_new_partitioning_cannot_read_are_a_conflict(lake: Lake) -> None:
    # An empty table: its dataset recorded no earlier partitioning to keep.
    result = lake.merge(
        ["CREATE TABLE ns.t (id INT8, k VARCHAR)"],
        ["ALTER TABLE ns.t SET PARTITIONED BY (k)"],
        ["INSERT INTO ns.t VALUES (1, 'x')"],
    )
    assert result.definition is None
    (conflict,) = result.conflicts
    assert conflict.startswith("file '")
    assert conflict.endswith(
        "was written on the target partitioned by [], while the source changed the table's "
        "partitioning to ['k']"
    )


def test_indices_cover_the_merged_files(lake: Lake) -> None:
    result = lake.merge(
        [*SETUP, "CREATE INDEX by_v ON ns.t (v)"],
        ["INSERT INTO ns.t VALUES (3, 'x')", "DELETE FROM ns.t WHERE id = 1"],
        ["INSERT INTO ns.t VALUES (4, 'x'), (5, 'y')"],
    )
    assert result.conflicts == ()
    merged = result.definition
    assert merged is not None
    storage = lake.lakehouse.storage
    meta = managed.metadata(storage, merged)
    by_value = {
        value: indices.lookup(storage, meta, "v", [value]) for value in ("a", "b", "x", "y")
    }
    files = meta.files()
    holding = {
        value: {label for label in files if value in _values(lake, files[label])}
        for value in by_value
    }
    assert by_value == holding
    assert by_value["a"] == set()
    assert lake.rows("SELECT id FROM ns.t WHERE v = 'x'") == [(3,), (4,)]
    lake.check()


def test_an_index_created_on_one_side_is_built_for_the_others_files(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["CREATE INDEX by_v ON ns.t (v)", "INSERT INTO ns.t VALUES (3, 'x')"],
        ["INSERT INTO ns.t VALUES (4, 'x')"],
    )
    assert result.conflicts == ()
    merged = result.definition
    assert merged is not None
    storage = lake.lakehouse.storage
    meta = managed.metadata(storage, merged)
    found = indices.lookup(storage, meta, "v", ["x"])
    assert found is not None
    assert len(found) == 2
    assert lake.rows("SELECT id FROM ns.t WHERE v = 'x'") == [(3,), (4,)]
    lake.check()


def _values(lake: Lake, path: str) -> set[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(pa.BufferReader(lake.lakehouse.storage.read(path)))
    return set(table.column("v").to_pylist())


def test_a_type_widened_on_one_side_reads_the_others_new_files(lake: Lake) -> None:
    result = lake.merge(
        ["CREATE TABLE ns.t (id INT8, n INT4)", "INSERT INTO ns.t VALUES (1, 10)"],
        ["ALTER TABLE ns.t ALTER COLUMN n TYPE INT8", "INSERT INTO ns.t VALUES (2, 5000000000)"],
        ["INSERT INTO ns.t VALUES (3, 30)"],
    )
    assert result.conflicts == ()
    assert result.definition is not None
    assert result.definition.column("n").type.to_sql() == "int8"
    assert lake.rows() == [(1, 10), (2, 5000000000), (3, 30)]
    lake.check()


def test_the_same_column_added_with_different_comments_is_a_conflict(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["ALTER TABLE ns.t ADD COLUMN n INT4 COMMENT 'source'"],
        ["ALTER TABLE ns.t ADD COLUMN n INT4 COMMENT 'target'"],
    )
    assert result.conflicts == (
        (
            "column 'n' (ID 3): its comment was changed on both sides (to 'source' on the source, "
            "'target' on the target)"
        ),
    )


def test_compaction_on_one_side_and_appends_on_the_other_merge(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["CALL system.rewrite_data_files('ns.t')"],
        ["INSERT INTO ns.t VALUES (3, 't')"],
    )
    assert result.conflicts == ()
    assert lake.rows() == [(1, "a"), (2, "b"), (3, "t")]
    meta = managed.metadata(lake.lakehouse.storage, lake.definition(lake.run()))
    assert len(meta.partitions) == 2  # the compacted file and the target's new one
    lake.check()


def test_compaction_on_both_sides_is_a_conflict_for_each_file(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["CALL system.rewrite_data_files('ns.t')"],
        ["CALL system.rewrite_data_files('ns.t')"],
    )
    assert result.definition is None
    assert len(result.conflicts) == 2
    assert all(c.endswith("was rewritten or deleted on both sides") for c in result.conflicts)
    assert list(result.conflicts) == sorted(result.conflicts)  # by label: deterministic


def test_a_table_replaced_on_one_side_is_a_conflict(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        [
            "DROP TABLE ns.t",
            "CREATE TABLE ns.t (id INT8, v VARCHAR)",
            "INSERT INTO ns.t VALUES (9, 's')",
        ],
        ["INSERT INTO ns.t VALUES (3, 't')"],
    )
    assert result.conflicts == (
        (
            "it was replaced by a new table (a new dataset) on the source, while both sides "
            "changed it: their files cannot be matched"
        ),
    )


def test_a_side_that_changed_only_the_definition_takes_the_others_files(lake: Lake) -> None:
    result = lake.merge(
        SETUP,
        ["ALTER TABLE ns.t SET PROPERTIES ('p' = 's')"],
        ["DELETE FROM ns.t WHERE id = 2", "INSERT INTO ns.t VALUES (3, 't')"],
    )
    assert result.definition is not None
    target = lake.definition(lake.run())
    assert result.definition.format_properties == target.format_properties
    assert result.definition.properties["p"] == "s"
    assert lake.rows() == [(1, "a"), (3, "t")]
