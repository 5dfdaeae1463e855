"""Fuzzing the files of a lakehouse: damage one file, read everything, judge each outcome.

A small lakehouse (several versions, a partitioned table with an index, a tree
of order 4 with several node files) is copied once per case; one of its files
gets a random truncation or a random byte change (seeded), and a child process
(:mod:`tests.lakehouse.fuzz_worker`) runs a fixed battery of reads on it:
connect, SELECT *, a filtered SELECT using the index, one using the partition
column, time travel, SHOW NAMESPACES, information_schema, DESCRIBE and
system.versions. The child runs under a timeout, so a crash or a hang is
caught and blamed on the case it happened in.

Every read must give either exactly the committed data or a PEP 249 error
(never a bare ``InternalError``: only its ``CorruptFileError`` subclass) whose
message names the damaged file. The one exception is written down in
docs/format.md ("What the format protects, and what it does not"): TrinityLake's files carry
no checksum, so a change that still decodes to valid values is undetectable.
Different data (or an error caused by it, such as a column type that no longer
matches the data) is accepted only where that holds:

* a byte change anywhere in a node file, a definition, dataset metadata or a
  Parquet file, except the magic bytes at either end of an Arrow IPC or
  Parquet file (a reader checks those);
* a truncation of a protobuf definition (protobuf has no end marker: a cut
  at a field boundary decodes as a definition without the later fields).

Truncating an Arrow IPC, Parquet or JSON file, or changing magic bytes, must
give the committed data or an error naming the file; any change to the
latest-version hint must give the committed data (a hint is only where the
probe for the latest version starts), except one that makes it a number above
every root: that is what a lost latest root looks like, and the
``DamagedVersionError`` naming the hint is the answer (docs/recovery.md).

The default run (CI) takes 48 cases, 6 per kind of file; ``--run-slow`` runs
``TRINITY_FUZZ_FILE_CASES`` cases (600 by default).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import tests
import trinity_dbapi
from tests.lakehouse.fuzz_worker import battery

REPO_ROOT = Path(tests.__file__).resolve().parent.parent

#: How long the child may take per case before it counts as hung (generous: the
#: machine is shared; an intact case takes well under a second).
SECONDS_PER_CASE = 20

KINDS = ("root", "node", "definition", "metadata", "index", "data", "common", "hint")


def kind_of(path: str) -> str | None:
    """The kind of a lakehouse file, by its relative path."""
    name = path.rpartition("/")[2]
    if re.fullmatch(r"_[01]{32}\.arrow", name):
        return "root"
    if name.endswith(".arrow"):
        return "node"
    if name.endswith(".binpb"):
        return "definition"
    if ".by-dataset-metadata." in name:
        # The top-level file is Kartothek's derived copy: nothing of ours reads it.
        return "metadata" if "/metadata/" in path else None
    if name.endswith(".by-dataset-index.parquet"):
        return "index"
    if name.endswith(".parquet"):
        return "data"
    if name == "_common_metadata":
        return "common"
    if name == "_latest_hint.txt":
        return "hint"
    return None


@dataclass(frozen=True)
class Damage:
    """One change to one file: a truncation to ``offset`` bytes, or a byte xor ``mask``."""

    path: str
    kind: str
    size: int
    offset: int
    mask: int  # 0: truncate at offset

    def apply(self, data: bytes) -> bytes:
        if self.mask == 0:
            return data[: self.offset]
        changed = bytearray(data)
        changed[self.offset] ^= self.mask
        return bytes(changed)

    @property
    def unprotected(self) -> bool:
        """Whether the format has nothing that could notice this change (see the module doc)."""
        if self.kind == "hint":
            return False
        if self.mask == 0:
            return self.kind == "definition"
        magic = {"root": 6, "node": 6, "index": 4, "data": 4, "common": 4}.get(self.kind, 0)
        return magic <= self.offset < self.size - magic

    def __str__(self) -> str:
        what = (
            f"truncated to {self.offset}"
            if self.mask == 0
            else f"byte {self.offset} ^ {self.mask:#x}"
        )
        return f"{self.kind} file {self.path!r} ({self.size} bytes) {what}"


def _build(root: Path) -> int:
    """The lakehouse every case starts from; returns the version time travel reads."""
    with trinity_dbapi.connect(str(root), create=True, autocommit=True, order=4) as conn:
        cur = conn.cursor()
        cur.execute("CREATE NAMESPACE ns")
        cur.execute("CREATE TABLE ns.t (p INT8, k INT8, v VARCHAR) PARTITIONED BY (p)")
        cur.execute("CREATE INDEX ik ON ns.t (k)")
        cur.execute("INSERT INTO ns.t SELECT i % 3, i, 'v' || i FROM range(12) AS r(i)")
        version = cur.execute("SELECT max(version) FROM system.versions").fetchone()[0]
        cur.execute("INSERT INTO ns.t SELECT i % 3, i, 'w' || i FROM range(12, 20) AS r(i)")
        for i in range(6):  # more keys than one node of order 4 holds: internal nodes
            cur.execute(f"CREATE NAMESPACE n{i}")
            cur.execute(f"CREATE TABLE n{i}.e (a INT4)")
        cur.execute("CALL system.compact()")  # flush the buffers into non-root nodes
    return int(version)


def _files(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            relative = path.relative_to(root).as_posix()
            kind = kind_of(relative)
            if kind is not None:
                found[kind].append(relative)
    return found


def _damages(files: dict[str, list[str]], root: Path, count: int, seed: int) -> list[Damage]:
    rng = random.Random(seed)
    damages = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        path = rng.choice(files[kind])
        size = (root / path).stat().st_size
        # Truncations and byte changes alternate, so every kind gets both.
        if (i // len(KINDS)) % 2 == 0 or size == 0:
            damages.append(Damage(path, kind, size, rng.randrange(size), 0))
        else:
            damages.append(Damage(path, kind, size, rng.randrange(size), rng.randrange(1, 256)))
    return damages


def _run(version: int, directories: list[Path]) -> tuple[dict[str, Any], str]:
    """Outcomes by case directory, and the child's stderr; a crash or hang stops early."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.lakehouse.fuzz_worker", str(version), *map(str, directories)],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=30 + SECONDS_PER_CASE * len(directories))
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += "\n[the battery timed out]"
    outcomes = {}
    for line in out.splitlines():
        record = json.loads(line)
        outcomes[record["case"]] = record["outcome"]
    if proc.returncode != 0:
        err += f"\n[the battery exited with status {proc.returncode}]"
    return outcomes, err


def _problem(
    damage: Damage, read: str, outcome: dict[str, Any], golden: dict[str, Any]
) -> str | None:
    """Why one read's outcome breaks the rule (None: it keeps it)."""
    if "rows" in outcome:
        if outcome["rows"] == golden["rows"] or damage.unprotected:
            return None
        return f"{read}: different data {outcome['rows'][:5]} (committed: {golden['rows'][:5]})"
    mro, message = outcome["mro"], outcome["message"]
    if damage.kind == "hint":
        # A hint changed into a number above every root reads exactly as a
        # lost latest root (docs/recovery.md): that error, naming the hint, is
        # the one allowed; any other damage to the hint must be ignored.
        if outcome["error"] == "DamagedVersionError" and damage.path in message:
            return None
        return f"{read}: a damaged hint must be ignored, not raise {outcome['error']}: {message}"
    if "trinity_dbapi.errors.Error" not in mro:
        return f"{read}: {outcome['error']} is not a PEP 249 error: {message[:300]}"
    # CorruptFileError and its kinds (DamagedVersionError: the latest root or
    # the definition it needs is damaged, docs/recovery.md) name the file;
    # any other InternalError is a bug.
    corrupt = "trinity_dbapi.errors.CorruptFileError" in mro
    if "trinity_dbapi.errors.InternalError" in mro and not corrupt:
        return f"{read}: {outcome['error']} (an internal error): {message[:300]}"
    if damage.path not in message and not damage.unprotected:
        return f"{read}: {outcome['error']} does not name the damaged file: {message[:300]}"
    return None


def _campaign(tmp_path: Path, count: int, seed: int) -> None:
    base = tmp_path / "base"
    version = _build(base)
    files = _files(base)
    assert all(files[kind] for kind in KINDS), {k: len(v) for k, v in files.items()}
    assert len(files["node"]) >= 2, "the tree should have non-root nodes"
    golden_outcomes, err = _run(version, [base])
    golden = golden_outcomes[str(base)]
    assert all("rows" in outcome for outcome in golden.values()), golden
    assert set(golden) == set(battery(version))

    damages = _damages(files, base, count, seed)
    directories = []
    for i, damage in enumerate(damages):
        case = tmp_path / f"case{i}"
        shutil.copytree(base, case)
        target = case / damage.path
        target.write_bytes(damage.apply(target.read_bytes()))
        directories.append(case)

    problems: list[str] = []
    tally: dict[str, int] = {"committed": 0, "error": 0, "different": 0}
    pending = list(range(len(damages)))
    while pending:
        outcomes, err = _run(version, [directories[i] for i in pending])
        done = [i for i in pending if str(directories[i]) in outcomes]
        for i in done:
            for read, outcome in outcomes[str(directories[i])].items():
                same = outcome.get("rows") == golden[read]["rows"]
                tally["error" if "error" in outcome else "committed" if same else "different"] += 1
                problem = _problem(damages[i], read, outcome, golden[read])
                if problem is not None:
                    problems.append(f"{damages[i]}: {problem}")
        rest = [i for i in pending if i not in done]
        if rest and len(done) < len(pending):
            # The first case without an outcome crashed or hung the child.
            culprit = rest[0]
            problems.append(f"{damages[culprit]}: crashed or hung the reader: {err[-2000:]}")
            rest = rest[1:]
        pending = rest
    print(f"{count} damaged files, outcomes of their reads: {tally}")  # shown with -s
    assert not problems, f"{len(problems)} problems in {count} cases:\n" + "\n".join(problems)


def test_damaged_files_give_committed_data_or_an_error_naming_them(tmp_path: Path) -> None:
    _campaign(tmp_path, count=6 * len(KINDS), seed=14)


@pytest.mark.slow
def test_damaged_files_large_campaign(tmp_path: Path) -> None:
    count = int(os.environ.get("TRINITY_FUZZ_FILE_CASES", "600"))
    _campaign(tmp_path, count=count, seed=int(os.environ.get("TRINITY_FUZZ_FILE_SEED", "1")))
