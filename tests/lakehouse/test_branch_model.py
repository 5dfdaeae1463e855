"""Random sequences of ref operations against a model of refs, versions and data files.

A Hypothesis state machine drives SQL through ``trinity_dbapi.connect`` (as a
user would) on a memory lakehouse with a few small unpartitioned tables:
CREATE BRANCH (from main, from a branch, FROM VERSION, FROM TAG), CREATE and
DROP TAG, CREATE TABLE ... CLONE, INSERT, DELETE, UPDATE, CREATE and DROP
TABLE on any branch, MERGE BRANCH into main and into other branches, DROP
BRANCH, ``system.expire_versions`` and ``system.collect_garbage``, and reads of
every table on every ref (``FOR SYSTEM_VERSION AS OF 'name'``) and of older
versions in a branch's session (``FOR SYSTEM_VERSION AS OF n``: that
branch's version n, the versions it shares with its source included).

The model knows each table as a set of data files, because the merge's
conflict unit is the data file (docs/sql.md, "MERGE BRANCH"; rule 5 of issue
35): every INSERT writes one new file (the tables are unpartitioned and no
table asks for automatic compaction), and a DELETE or UPDATE rewrites exactly
the files that hold a matching row. Each ref's chain of versions is modelled
as the engine numbers it (a branch continues the numbers of the version it
was made from; every ref change is a commit on main), with the merge base the
engine documents: the newest version both histories share, or the source's
head at the last merge between the same two branches, whichever is newer.
Then for every table:

* changed on one side only: the source's version is taken;
* dropped on one side and changed on the other, or created on both: conflict;
* changed on both: a table replaced (dropped and created again, so a new
  dataset) on either side is a conflict; otherwise files are kept unless
  removed on a side, files added on either side are added (once), and a file
  removed on both sides is a conflict.

Every read equals the model; every merge succeeds or raises
:class:`~trinity_dbapi.errors.MergeConflictError` exactly when the model
says, and a conflicting merge changes nothing; ``system.refs`` shows every
head the model expects; expiring versions and collecting garbage never break
a read of any ref, and keep every main version a branch or a tag needs.

The default run is a short campaign; ``--run-slow`` runs a long one. The two
plain tests at the end replay engine bugs the model found.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import trinity_dbapi
from trinity_dbapi.errors import (
    MergeConflictError,
    NoSuchRefError,
    NoSuchTableError,
    NoSuchVersionError,
    ObjectExistsError,
    ProgrammingError,
)

TABLES = ["t1", "t2", "t3"]
BRANCHES = ["b1", "b2", "b3"]
TAGS = ["g1", "g2"]
MAIN = "main"
SLOT = st.integers(0, 7)  # picks one of the live refs
FAR_FUTURE = "TIMESTAMP '2999-01-01 00:00:00'"

Row = tuple[int, int]
File = tuple[int, tuple[Row, ...]]  # (file id, its rows)


@dataclass(frozen=True)
class Table:
    """One table's definition as the model knows it.

    ``token`` names the definition a commit wrote: two states hold the same
    definition exactly when their tokens are equal (the engine compares the
    paths of definition files). ``files`` are the table's data files.
    ``dataset`` names its dataset: a table dropped and created again (or
    cloned again) under the same name on a side has a new one, and both
    sides' files cannot be matched then.
    """

    token: int
    files: frozenset[File]
    dataset: int = 0  # the Kartothek dataset: new at CREATE TABLE and CLONE, kept by writes

    def rows(self) -> list[Row]:
        return sorted(row for _, rows in self.files for row in rows)


State = Mapping[str, Table]

#: The namespace ``default``, which the first CREATE TABLE of a chain creates.
#: Each side that creates it writes its own definition file, of equal bytes:
#: a merge finds the two the same (no conflict, no change), but a side that
#: inherited one copy takes the other's like any change.
NAMESPACE = "namespace default"


@dataclass
class Branch:
    """A branch: its chain's segments, its head, and its last merges."""

    folder: str
    base_version: int
    lineage: tuple[tuple[int, str], ...]  # (first version, folder), newest first
    head: int
    # The other branch's folder ("" for main) -> the root of their last merge.
    merged: dict[str, tuple[str, int]] = field(default_factory=dict)


def _folder_at(lineage: tuple[tuple[int, str], ...], version: int) -> str:
    """The folder holding ``version``'s root on a chain with ``lineage`` (newest first)."""
    for first, folder in lineage:
        if version >= first:
            return folder
    raise AssertionError(f"no segment holds version {version}: {lineage}")


def _event(name: str) -> None:
    """Count an outcome in Hypothesis' statistics."""
    if currently_in_test_context():
        event(name)


MAIN_LINEAGE: tuple[tuple[int, str], ...] = ((0, ""),)


class BranchModel(RuleBasedStateMachine):
    """Refs, versions and data files of a lakehouse, next to the real thing."""

    # -- set up ----------------------------------------------------------------------

    @initialize()
    def create(self) -> None:
        self.uri = f"memory://branch-model-{uuid.uuid4().hex}/lake"
        self.con = trinity_dbapi.connect(self.uri, autocommit=True)
        self.cur = self.con.cursor()
        self.counter = itertools.count(1)  # tokens, file ids, row ids, folders, ticks
        # (folder, version) -> (state, tick of its commit)
        self.roots: dict[tuple[str, int], tuple[dict[str, Table], int]] = {}
        self.main_head = 0
        self.main_expired: set[int] = set()  # main's versions expiration deleted
        self.branches: dict[str, Branch] = {}
        self.tags: dict[str, tuple[str, int]] = {}
        self.on: str | None = None  # the session's branch, as last set
        self.roots[("", 0)] = ({}, self._tick())
        self._sql("CREATE TABLE t1 (id INT8, v INT8)")
        self._commit(
            MAIN, {NAMESPACE: self._new_table(frozenset()), "t1": self._new_table(frozenset())}
        )
        self.insert(MAIN, "t1", 2)
        self.create_branch("b1", "main", 0, 0)  # so that merges have a side from the start

    def teardown(self) -> None:
        if hasattr(self, "con"):
            self.con.close()

    # -- helpers ---------------------------------------------------------------------

    def _tick(self) -> int:
        return next(self.counter)

    def _sql(self, sql: str, ref: str = MAIN) -> list[tuple[Any, ...]]:
        if self.on != ref:
            self.cur.execute(f"USE BRANCH {ref}")
            self.on = ref
        self.cur.execute(sql)
        return list(self.cur.fetchall()) if self.cur.description else []

    def _lineage(self, ref: str) -> tuple[tuple[int, str], ...]:
        return MAIN_LINEAGE if ref == MAIN else self.branches[ref].lineage

    def _head(self, ref: str) -> int:
        return self.main_head if ref == MAIN else self.branches[ref].head

    def _root(self, ref: str, version: int | None = None) -> tuple[str, int]:
        version = self._head(ref) if version is None else version
        return (_folder_at(self._lineage(ref), version), version)

    def _state(self, ref: str) -> dict[str, Table]:
        return self.roots[self._root(ref)][0]

    def _commit(self, ref: str, state: Mapping[str, Table]) -> None:
        """Record a commit on ``ref`` (the next version on its chain)."""
        version = self._head(ref) + 1
        self.roots[(_folder_at(self._lineage(ref), version), version)] = (
            dict(state),
            self._tick(),
        )
        if ref == MAIN:
            self.main_head = version
        else:
            self.branches[ref].head = version

    def _main_commit(self) -> None:
        """A definition-only commit on main (a ref changed)."""
        self._commit(MAIN, self._state(MAIN))

    def _refs(self) -> list[str]:
        return [MAIN, *sorted(self.branches)]

    def _pick(self, slot: int | str) -> str:
        """A live ref: main or a branch (a name is taken as it is)."""
        if isinstance(slot, str):
            return slot
        refs = self._refs()
        return refs[slot % len(refs)]

    def _new_table(self, files: frozenset[File]) -> Table:
        return Table(self._tick(), files, self._tick())

    def _new_file(self, rows: list[Row]) -> File:
        return (self._tick(), tuple(sorted(rows)))

    def _source_at(self, ref: str, version: int) -> bool:
        """Whether ``version`` of ``ref``'s chain still exists (expiration only touches main)."""
        folder = _folder_at(self._lineage(ref), version)
        return folder != "" or version not in self.main_expired

    # -- writes ----------------------------------------------------------------------

    @rule(slot=SLOT, table=st.sampled_from(TABLES), n=st.integers(1, 3))
    def insert(self, slot: int | str, table: str, n: int) -> None:
        ref = self._pick(slot)
        state = self._state(ref)
        if table not in state:
            return
        rows = [(self._tick(), 0) for _ in range(n)]
        values = ", ".join(f"({i}, {v})" for i, v in rows)
        self._sql(f"INSERT INTO {table} VALUES {values}", ref)
        old = state[table]
        new = replace(old, token=self._tick(), files=old.files | {self._new_file(rows)})
        self._commit(ref, {**state, table: new})
        self._check_ref(ref)

    def _rewrite(self, slot: int, table: str, picks: list[int], update: bool) -> None:
        ref = self._pick(slot)
        state = self._state(ref)
        if table not in state or not state[table].rows():
            return
        rows = state[table].rows()
        ids = sorted({rows[p % len(rows)][0] for p in picks})
        where = f"id IN ({', '.join(map(str, ids))})"
        if update:
            self._sql(f"UPDATE {table} SET v = v + 1 WHERE {where}", ref)
        else:
            self._sql(f"DELETE FROM {table} WHERE {where}", ref)
        files = set()
        for file in state[table].files:
            held = file[1]
            if not any(i in ids for i, _ in held):
                files.add(file)
                continue
            kept = [
                (i, v + 1) if update and i in ids else (i, v)
                for i, v in held
                if update or i not in ids
            ]
            if kept:
                files.add(self._new_file(kept))
        rewritten = replace(state[table], token=self._tick(), files=frozenset(files))
        self._commit(ref, {**state, table: rewritten})
        self._check_ref(ref)

    @rule(
        slot=SLOT,
        table=st.sampled_from(TABLES),
        picks=st.lists(st.integers(0, 30), min_size=1, max_size=2),
    )
    def delete(self, slot: int, table: str, picks: list[int]) -> None:
        self._rewrite(slot, table, picks, update=False)

    @rule(
        slot=SLOT,
        table=st.sampled_from(TABLES),
        picks=st.lists(st.integers(0, 30), min_size=1, max_size=2),
    )
    def update(self, slot: int, table: str, picks: list[int]) -> None:
        self._rewrite(slot, table, picks, update=True)

    @rule(slot=SLOT, table=st.sampled_from(TABLES))
    def create_or_drop_table(self, slot: int, table: str) -> None:
        ref = self._pick(slot)
        state = dict(self._state(ref))
        if table in state:
            self._sql(f"DROP TABLE {table}", ref)
            del state[table]
        else:
            self._sql(f"CREATE TABLE {table} (id INT8, v INT8)", ref)
            state[table] = self._new_table(frozenset())
            if NAMESPACE not in state:  # made by the first CREATE TABLE
                state[NAMESPACE] = self._new_table(frozenset())
        self._commit(ref, state)
        self._check_ref(ref)

    @rule(
        slot=SLOT,
        table=st.sampled_from(TABLES),
        source=st.sampled_from(TABLES),
    )
    def clone(self, slot: int, table: str, source: str) -> None:
        ref = self._pick(slot)
        state = self._state(ref)
        if table in state or source not in state:
            return
        self._sql(f"CREATE TABLE {table} CLONE {source}", ref)
        self._commit(ref, {**state, table: self._new_table(state[source].files)})
        self._check_ref(ref)

    # -- refs ------------------------------------------------------------------------

    @rule(
        name=st.sampled_from(BRANCHES),
        kind=st.sampled_from(["main", "BRANCH", "VERSION", "TAG"]),
        slot=SLOT,
        back=st.integers(0, 6),
    )
    def create_branch(self, name: str, kind: str, slot: int, back: int) -> None:
        if name in self.branches or name in self.tags:
            with pytest.raises(ObjectExistsError):
                self._sql(f"CREATE BRANCH {name}")
            return
        session = MAIN
        if kind == "main":
            clause, root = "", self._root(MAIN)
        elif kind == "BRANCH":
            source = self._pick(slot)
            clause, root = f" FROM BRANCH {source}", self._root(source)
        elif kind == "VERSION":
            session = self._pick(slot)
            version = max(0, self._head(session) - back)
            root = self._root(session, version)
            clause = f" FROM VERSION {version}"
            if not self._source_at(session, version):
                with pytest.raises(NoSuchVersionError):
                    self._sql(f"CREATE BRANCH {name}{clause}", session)
                return
        else:
            if not self.tags:
                return
            source = sorted(self.tags)[slot % len(self.tags)]
            clause, root = f" FROM TAG {source}", self.tags[source]
        folder, version = root
        lineage = self._lineage_at(folder, version)
        if lineage is None:  # made on a branch dropped since: no history to continue
            with pytest.raises(ProgrammingError, match="dropped"):
                self._sql(f"CREATE BRANCH {name}{clause}", session)
            return
        self._sql(f"CREATE BRANCH {name}{clause}", session)
        _event(f"create branch from {kind}" + (" (a branch)" if folder else ""))
        own = f"f{self._tick()}"
        self.branches[name] = Branch(own, version, ((version + 1, own), *lineage), version)
        self._main_commit()
        self._check_ref(name)

    def _lineage_at(self, folder: str, version: int) -> tuple[tuple[int, str], ...] | None:
        """The history up to ``version`` of a root in ``folder`` (as a live branch holds it)."""
        if folder == "":
            return MAIN_LINEAGE
        for branch in self.branches.values():
            tail = tuple((f, d) for f, d in branch.lineage if f <= version)
            if tail and tail[0][1] == folder:
                return tail
        return None

    @rule(name=st.sampled_from(BRANCHES))
    def drop_branch(self, name: str) -> None:
        if name not in self.branches:
            with pytest.raises(NoSuchRefError):
                self._sql(f"DROP BRANCH {name}")
            return
        self._sql(f"DROP BRANCH {name}")
        folder = self.branches.pop(name).folder
        for branch in self.branches.values():  # their last merge with it is forgotten
            branch.merged.pop(folder, None)
        self._main_commit()

    @rule(name=st.sampled_from(TAGS), slot=SLOT)
    def create_tag(self, name: str, slot: int) -> None:
        ref = self._pick(slot)
        if name in self.tags:
            with pytest.raises(ObjectExistsError):
                self._sql(f"CREATE TAG {name} FROM BRANCH {ref}")
            return
        self._sql(f"CREATE TAG {name} FROM BRANCH {ref}")
        self.tags[name] = self._root(ref)
        self._main_commit()
        self._check_tag(name)

    @rule(name=st.sampled_from(TAGS))
    def drop_tag(self, name: str) -> None:
        if name not in self.tags:
            return
        self._sql(f"DROP TAG {name}")
        del self.tags[name]
        self._main_commit()

    # -- merges ----------------------------------------------------------------------

    def _fork(self, source: str, target: str) -> int:
        """The newest version both chains' histories share (the engine's rule)."""
        src, tgt = self._lineage(source), self._lineage(target)
        heads = min(self._head(source), self._head(target))
        for first in sorted({f for f, _ in src} | {f for f, _ in tgt}):
            if _folder_at(src, first) != _folder_at(tgt, first):
                return min(first - 1, heads)
        return heads

    def _base(self, source: str, target: str) -> dict[str, Table]:
        fork = self._fork(source, target)
        base_root = self._root(source, fork)
        state, tick = self.roots[base_root]
        for one, other in ((source, target), (target, source)):
            if one == MAIN:
                continue
            other_folder = "" if other == MAIN else self.branches[other].folder
            recorded = self.branches[one].merged.get(other_folder)
            if recorded is not None and self.roots[recorded][1] > tick:
                state, tick = self.roots[recorded]
        return state

    def _merged(
        self, base: State, theirs: State, ours: State
    ) -> tuple[dict[str, Table] | None, list[str], bool]:
        """The model's three-way merge: (result or None on conflict, conflicts, changed)."""
        result = dict(ours)
        conflicts: list[str] = []
        changed = False
        for table in sorted(set(base) | set(theirs) | set(ours)):
            b, s, t = base.get(table), theirs.get(table), ours.get(table)
            if s == b:
                continue  # the source did not change it
            if t == b:  # changed on the source only: taken
                changed = True
                if s is None:
                    del result[table]
                else:
                    result[table] = s
                continue
            if s == t or (table == NAMESPACE and s is not None and t is not None):
                continue  # the same definition (equal bytes) on both sides
            if s is None or t is None:
                conflicts.append(f"{table}: dropped on one side and changed on the other")
                continue
            if b is None:
                conflicts.append(f"{table}: created on both sides")
                continue
            if s.dataset != b.dataset or t.dataset != b.dataset:
                conflicts.append(f"{table}: replaced by a new table while both sides changed it")
                continue
            removed_s, removed_t = b.files - s.files, b.files - t.files
            if removed_s & removed_t:
                conflicts.append(f"{table}: a file rewritten or deleted on both sides")
                continue
            files = (t.files - removed_s) | (s.files - b.files)
            result[table] = replace(t, token=self._tick(), files=frozenset(files))
            changed = True
        return (None if conflicts else result), conflicts, changed

    @rule(source=SLOT, into=SLOT)
    def merge(self, source: int, into: int) -> None:
        refs = self._refs()
        if len(refs) < 2:
            return
        source_ref = refs[source % len(refs)]
        others = [r for r in refs if r != source_ref]
        self._merge(source_ref, others[into % len(others)])

    def _merge(self, source: str, target: str) -> None:
        sql = f"MERGE BRANCH {source} INTO {target}"
        base = self._base(source, target)
        theirs, ours = self._state(source), self._state(target)
        result, conflicts, changed = self._merged(base, theirs, ours)
        heads = {ref: self._head(ref) for ref in self._refs()}
        _event(
            f"merge {'into main' if target == MAIN else 'into a branch'}: "
            f"{'conflict' if result is None else 'merged' if changed else 'nothing'}"
        )
        if result is None:
            with pytest.raises(MergeConflictError) as caught:
                self._sql(sql)
            for reason in conflicts:  # every conflicting table is named
                assert f"default.{reason.split(':')[0]}" in str(caught.value), (reason, caught)
            assert self._engine_heads() == heads  # nothing changed
            self._check_ref(target)
            return
        self._sql(sql)
        if not changed:  # nothing to merge, or both sides made the same changes: no commit
            assert self._engine_heads() == heads
            return
        source_root = self._root(source)
        self._commit(target, result)
        source_folder = "" if source == MAIN else self.branches[source].folder
        target_folder = "" if target == MAIN else self.branches[target].folder
        if source != MAIN:
            self.branches[source].merged[target_folder] = source_root
        if target != MAIN:
            self.branches[target].merged[source_folder] = source_root
            self._main_commit()  # the merge base is recorded in main's definition
        self._check_ref(target)

    # -- maintenance -----------------------------------------------------------------

    @rule(keep=st.integers(1, 3), collect=st.booleans())
    def expire_and_collect(self, keep: int, collect: bool) -> None:
        self._sql(f"CALL system.expire_versions(older_than => {FAR_FUTURE}, retain_last => {keep})")
        present = {row[0] for row in self._sql("SELECT version FROM system.versions")}
        needed = {self.main_head}
        needed |= {v for folder, v in self.tags.values() if folder == ""}
        for branch in self.branches.values():
            needed.add(
                max(v for v in range(branch.head + 1) if _folder_at(branch.lineage, v) == "")
            )
            needed |= {v for (folder, v) in branch.merged.values() if folder == ""}
        assert needed <= present, (needed - present, present)
        self.main_expired |= set(range(self.main_head + 1)) - present
        _event(f"expire: {len(present)} versions kept")
        if collect:
            self._sql("CALL system.collect_garbage(grace_period_millis => 0)")
        self.check_every_read()

    # -- checks ----------------------------------------------------------------------

    def _engine_heads(self) -> dict[str, int]:
        rows = self._sql("SELECT ref_name, ref_type, version FROM system.refs")
        return {name: version for name, kind, version in rows if kind == "branch"}

    def _read(self, name: str, expected: State) -> None:
        for table in TABLES:
            sql = f"SELECT id, v FROM {table} FOR SYSTEM_VERSION AS OF '{name}'"
            if table in expected:
                got = sorted(self._sql(sql))
                assert got == expected[table].rows(), (name, table, got, expected[table])
            else:
                with pytest.raises(NoSuchTableError):
                    self._sql(sql)

    def _check_ref(self, ref: str) -> None:
        self._read(ref, self._state(ref))

    def _check_tag(self, name: str) -> None:
        self._read(name, self.roots[self.tags[name]][0])

    @invariant()
    def heads_match(self) -> None:
        if not hasattr(self, "con"):
            return
        expected = {ref: self._head(ref) for ref in self._refs()}
        assert self._engine_heads() == expected
        tags = {
            name: version
            for name, kind, version in self._sql(
                "SELECT ref_name, ref_type, version FROM system.refs"
            )
            if kind == "tag"
        }
        assert tags == {name: version for name, (_, version) in self.tags.items()}

    @rule(slot=SLOT, back=st.integers(0, 8))
    def read_version(self, slot: int, back: int) -> None:
        """``FOR SYSTEM_VERSION AS OF n`` in a branch's session reads that branch's version n."""
        ref = self._pick(slot)
        version = max(0, self._head(ref) - back)
        if not self._source_at(ref, version):
            with pytest.raises(NoSuchVersionError):
                self._sql(f"SELECT id FROM t1 FOR SYSTEM_VERSION AS OF {version}", ref)
            return
        expected = self.roots[self._root(ref, version)][0]
        for table in TABLES:
            sql = f"SELECT id, v FROM {table} FOR SYSTEM_VERSION AS OF {version}"
            if table in expected:
                assert sorted(self._sql(sql, ref)) == expected[table].rows(), (ref, version)
            else:
                with pytest.raises(NoSuchTableError):
                    self._sql(sql, ref)

    @precondition(lambda self: hasattr(self, "con"))
    @rule()
    def check_every_read(self) -> None:
        for ref in self._refs():
            self._check_ref(ref)
        for name in self.tags:
            self._check_tag(name)


BranchModel.TestCase.settings = settings(
    max_examples=20,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestBranchModel = BranchModel.TestCase


@pytest.mark.slow
def test_branch_model_long() -> None:
    """A bigger campaign for the slow suite."""
    run_state_machine_as_test(
        BranchModel,
        settings=settings(
            max_examples=200,
            stateful_step_count=50,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


def test_a_branch_made_again_under_a_dropped_ones_name_has_its_own_merge_base() -> None:
    """The other branches forget their last merge with a dropped branch.

    Found by the model: b2 remembered its merge with the first b1 (by name),
    and the merge of a new b1 took that root as its base, so it dropped the
    row the first b1 had brought to b2.
    """
    con = trinity_dbapi.connect(f"memory://branch-model-{uuid.uuid4().hex}/lake", autocommit=True)
    cur = con.cursor()

    def run(sql: str, branch: str = MAIN) -> list[tuple[Any, ...]]:
        cur.execute(f"USE BRANCH {branch}")
        cur.execute(sql)
        return sorted(cur.fetchall()) if cur.description else []

    run("CREATE TABLE a (id INT8)")
    run("INSERT INTO a VALUES (1)")
    run("CREATE BRANCH b2")
    run("CREATE BRANCH b1")
    run("INSERT INTO a VALUES (2)", "b1")
    run("MERGE BRANCH b1 INTO b2")
    run("DROP BRANCH b1")
    run("CREATE BRANCH b1")  # from main, which never had row 2
    run("INSERT INTO a VALUES (3)", "b1")
    ((_, _, _, _, fast_forward, changed),) = run("MERGE BRANCH b1 INTO b2")
    assert (fast_forward, changed) == (False, 1)
    assert run("SELECT id FROM a", "b2") == [(1,), (2,), (3,)]
    cur.execute("SELECT ref_name FROM system.refs")
    assert sorted(cur.fetchall()) == [("b1",), ("b2",), ("main",)]
    con.close()


def test_the_default_namespace_made_on_both_sides_merges() -> None:
    """A branch made before the first table: both sides' first CREATE TABLE make ``default``.

    Found by the model: the two equal namespace definitions were a
    "created on both sides" conflict.
    """
    con = trinity_dbapi.connect(f"memory://branch-model-{uuid.uuid4().hex}/lake", autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE t1 (id INT8)")
    cur.execute("INSERT INTO t1 VALUES (1)")
    cur.execute("CREATE BRANCH b1 FROM VERSION 0")  # the empty lakehouse
    cur.execute("USE BRANCH b1")
    cur.execute("CREATE TABLE t2 (id INT8)")
    cur.execute("MERGE BRANCH main INTO b1")
    assert cur.fetchall()[0][5] == 1  # t1 taken; the namespace is the same on both
    cur.execute("SELECT id FROM t1")
    assert cur.fetchall() == [(1,)]
    cur.execute("SELECT count(*) FROM t2")
    assert cur.fetchall() == [(0,)]
    con.close()
