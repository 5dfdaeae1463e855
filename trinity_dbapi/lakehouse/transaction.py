"""Lakehouse transactions: isolation levels, conflict checks, rebase and retry.

A transaction pins one root version when it begins; every read resolves through
it, and its own staged writes are visible to it first. Nothing it does is
visible to anyone else until its commit creates the next root node file.

Commit protocol (FORMAT-NOTES sections 2 and 5):

1. write the staged object definition files (new immutable files);
2. apply the staged writes to the pinned root and create root ``v + 1``;
3. if another writer created ``v + 1`` first, read every version from
   ``v + 1`` to the latest ``w``; each root's buffer holds exactly the
   messages of the transaction that made it (its ``txn_id``), so the keys it
   changed are known without diffing trees. Under SNAPSHOT ISOLATION it is a
   conflict when such a key is one this transaction writes; under
   SERIALIZABLE also when it is one this transaction read (found or not) or
   lies in a range it scanned, which rules out write skew and phantoms. A
   version made by a rollback conflicts with every writer, since it may
   change any key;
4. without conflict, re-apply the staged writes on ``w`` and try ``w + 1``,
   after a jittered exponential backoff, up to ``RetryPolicy.max_attempts``.

A conflict raises :class:`CommitConflictError` naming the object and the
version; running out of attempts raises :class:`RetriesExhaustedError`. Both
leave storage consistent: files written by failed attempts are unreachable
and garbage collection removes them.

Imports from lakehouse/: chain, commit_point, definition_cache, derived, io_pool,
saved_transactions, table_formats, views.
"""

from __future__ import annotations

import enum
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CommitConflictError,
    CorruptFileError,
    InvalidNameError,
    NoSuchVersionError,
    NotSupportedError,
    ProgrammingError,
    ReadOnlyError,
    RetriesExhaustedError,
    TransactionClosedError,
)
from trinity_dbapi.format.keys import decode_key
from trinity_dbapi.lakehouse.commit_point import (
    Progress,
    check_author,
    check_commit_message,
    commit_notes,
    node_file_progress,
)
from trinity_dbapi.lakehouse.definition_cache import D
from trinity_dbapi.lakehouse.derived import publish_after_commit
from trinity_dbapi.lakehouse.io_pool import io_pool
from trinity_dbapi.lakehouse.saved_transactions import HandOff
from trinity_dbapi.lakehouse.table_formats import located
from trinity_dbapi.lakehouse.views import ViewOperations
from trinity_dbapi.tree.btree import prefix_end

if TYPE_CHECKING:
    # typing.Self is Python 3.11+; typing_extensions is only needed by mypy.
    from typing_extensions import Self

    from trinity_dbapi.format.definitions import LakehouseDefinition
    from trinity_dbapi.lakehouse.chain import Snapshot, VersionChain


class IsolationLevel(str, enum.Enum):
    """The two isolation levels of the TrinityLake format."""

    SERIALIZABLE = "SERIALIZABLE"
    SNAPSHOT = "SNAPSHOT ISOLATION"

    @classmethod
    def parse(cls, value: IsolationLevel | str) -> IsolationLevel:
        """Accept the enum, its value, or ``SNAPSHOT`` / ``SERIALIZABLE`` in any case."""
        if isinstance(value, IsolationLevel):
            return value
        text = " ".join(str(value).upper().replace("_", " ").split())
        if text in ("SNAPSHOT", "SNAPSHOT ISOLATION"):
            return cls.SNAPSHOT
        if text == "SERIALIZABLE":
            return cls.SERIALIZABLE
        raise ProgrammingError(
            f"unknown isolation level {value!r}: use SERIALIZABLE or SNAPSHOT ISOLATION"
        )


#: The isolation level of a transaction that names none: the strictest one.
DEFAULT_ISOLATION = IsolationLevel.SERIALIZABLE


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a commit retries after losing the race.

    Attributes:
        max_attempts: attempts to create the next root before giving up.
        base_delay: seconds of backoff after the first lost attempt.
        max_delay: the cap of the exponential backoff, in seconds.
    """

    max_attempts: int = 32
    base_delay: float = 0.002
    max_delay: float = 0.25

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.base_delay < 0 or self.max_delay < self.base_delay:
            raise ProgrammingError(
                f"invalid retry policy {self}: max_attempts >= 1 and "
                "0 <= base_delay <= max_delay are required"
            )

    def delay(self, attempt: int, rng: random.Random) -> float:
        """The backoff before attempt ``attempt + 1`` ("full jitter")."""
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))


class _State(enum.Enum):
    ACTIVE = "active"
    COMMITTED = "committed"
    ABORTED = "aborted"
    SAVED = "saved"  # SAVE TRANSACTION handed it off (lakehouse/handoff.py)


_thread_rng = threading.local()


def _rng() -> random.Random:
    rng = getattr(_thread_rng, "rng", None)
    if rng is None:
        rng = _thread_rng.rng = random.Random()
    return rng


def _in_any(key: str, ranges: list[tuple[str | None, str | None]]) -> bool:
    return any((lo is None or key >= lo) and (hi is None or key < hi) for lo, hi in ranges)


#: A change of one key's value (None: absent) computed from its current value.
Merge = Callable[[str | None], str | None]


@dataclass(frozen=True)
class Savepoint:
    """The staged changes of a transaction at one moment (see :meth:`Transaction.savepoint`)."""

    writes: Mapping[str, str | None]
    files: Mapping[str, bytes]
    definition_change: Callable[[LakehouseDefinition], LakehouseDefinition] | None
    merges: Mapping[str, list[Merge]]


class Transaction(ViewOperations):
    """A unit of work on a lakehouse; create it with :meth:`Lakehouse.begin`.

    Keys are raw tree keys here; :mod:`trinity_dbapi.lakehouse.objects` adds namespaces
    and tables on top, :mod:`trinity_dbapi.lakehouse.views` views. Use it as a context manager to commit on success and
    abort on an exception.
    """

    def __init__(
        self,
        lakehouse: VersionChain,
        snapshot: Snapshot,
        *,
        isolation: IsolationLevel | str = DEFAULT_ISOLATION,
        read_only: bool = False,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.lakehouse = lakehouse
        self.snapshot = snapshot
        self.isolation = IsolationLevel.parse(isolation)
        self.read_only = read_only
        self.retry = retry or RetryPolicy()
        self.id = str(uuid.uuid4())
        #: When it began (epoch ms): a saved transaction expires ``txn_ttl_millis`` after it.
        self.began_at_millis = int(time.time() * 1000)
        self.attempts = 0
        self.committed: Snapshot | None = None
        self._state = _State.ACTIVE
        self._writes: dict[str, str | None] = {}
        self._reads: set[str] = set()
        self._ranges: list[tuple[str | None, str | None]] = []
        # Keys and ranges that must stay unchanged at any isolation level: the
        # catalog's own integrity (a table needs its namespace) depends on them.
        self._required: set[str] = set()
        self._required_ranges: list[tuple[str | None, str | None]] = []
        self._files: dict[str, bytes] = {}
        self._definition_change: Callable[[LakehouseDefinition], LakehouseDefinition] | None = None
        # Keys whose every staged change is a merge: recomputed from the newest
        # value when the commit is rebased, so they never write-write conflict.
        self._merges: dict[str, list[Merge]] = {}
        self._author = lakehouse.author  # the connection's, unless set otherwise
        self._message: str | None = None

    def __repr__(self) -> str:
        return (
            f"Transaction({self.id[:8]}, version={self.snapshot.version}, "
            f"{self.isolation.value}, {self._state.value})"
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self._state is not _State.ACTIVE:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    @property
    def is_active(self) -> bool:
        return self._state is _State.ACTIVE

    @property
    def is_saved(self) -> bool:
        """Whether SAVE TRANSACTION handed it off: only its loader can go on with it."""
        return self._state is _State.SAVED

    @property
    def has_changes(self) -> bool:
        return bool(self._writes) or self._definition_change is not None

    @property
    def author(self) -> str | None:
        """Who the version this transaction commits names as its author (None: nobody).

        The lakehouse handle's (``connect(..., author=...)``) unless set;
        checked by :func:`~trinity_dbapi.lakehouse.commit_point.check_author`.
        """
        return self._author

    @author.setter
    def author(self, author: str | None) -> None:
        self._check_active()
        self._author = check_author(author)

    @property
    def message(self) -> str | None:
        """The commit message of the version this transaction commits (None: none).

        SQL ``SET COMMIT MESSAGE``; kept when the commit is rebased and
        retried. Checked by :func:`~trinity_dbapi.lakehouse.commit_point.check_commit_message`.
        """
        return self._message

    @message.setter
    def message(self, message: str | None) -> None:
        self._check_active()
        self._message = check_commit_message(message)

    # -- reads -----------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        """The value of ``key`` as this transaction sees it (own writes first)."""
        self._check_active()
        if key in self._writes:
            return self._writes[key]
        self._reads.add(key)
        return self.snapshot.get(key)

    def peek(self, key: str) -> str | None:
        """The value of ``key`` as this transaction sees it, recording no read.

        Only for callers whose correctness does not rest on the value staying
        unchanged (or who check it again at rebase, as merges do).
        """
        self._check_active()
        return self._writes[key] if key in self._writes else self.snapshot.get(key)

    def scan(self, lo: str | None = None, hi: str | None = None) -> Iterator[tuple[str, str]]:
        """Every ``(key, value)`` with ``lo <= key < hi``, own writes merged in."""
        self._check_active()
        self._ranges.append((lo, hi))
        merged = dict(self.snapshot.scan(lo, hi))
        for key, value in self._writes.items():
            if (lo is None or key >= lo) and (hi is None or key < hi):
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
        return iter(sorted(merged.items()))

    def scan_prefix(self, prefix: str) -> Iterator[tuple[str, str]]:
        """Every ``(key, value)`` whose key starts with ``prefix``."""
        return self.scan(prefix, prefix_end(prefix))

    def require(self, key: str) -> str | None:
        """Read ``key`` and make the commit fail if anyone changes it meanwhile.

        Unlike a plain read this holds under SNAPSHOT ISOLATION too: object
        operations use it for what the catalog's integrity rests on.
        """
        value = self.get(key)
        if key not in self._writes:
            self._required.add(key)
        return value

    def require_range(self, lo: str | None, hi: str | None) -> list[tuple[str, str]]:
        """Scan ``[lo, hi)`` and make the commit fail if any key in it changes meanwhile."""
        items = list(self.scan(lo, hi))
        self._required_ranges.append((lo, hi))
        return items

    def read_file(self, path: str) -> bytes:
        """A file staged by this transaction, or else from storage."""
        staged = self._files.get(path)
        if staged is not None:
            return staged
        try:
            return self.lakehouse.read_location(path)
        except CorruptFileError as exc:  # this version may have been expired meanwhile
            self.snapshot.raise_explained(exc)

    def read_object_definition(self, path: str, kind: type[D]) -> D:
        """The namespace or table definition at ``path``, parsed once per lakehouse handle.

        A file this transaction staged is parsed on its own and never cached:
        until the commit writes it, no other transaction may see it. Every
        other file is committed and immutable, so the lakehouse's
        :class:`~trinity_dbapi.lakehouse.definition_cache.DefinitionCache`
        serves it to every transaction and version alike.
        """
        staged = self._files.get(path)
        if staged is not None:
            return kind.from_bytes(staged, path)
        try:
            definition = self.lakehouse.definition_cache.load(
                path, kind, self.lakehouse.read_location
            )
            return located(definition, path, self.lakehouse.storage.root_uri)
        except CorruptFileError as exc:  # this version may have been expired meanwhile
            self.snapshot.raise_explained(exc)

    # -- writes ----------------------------------------------------------------------

    def put(self, key: str, value: str) -> None:
        """Stage setting ``key`` to ``value``."""
        self._check_writable()
        self._writes[key] = value
        self._merges.pop(key, None)  # an absolute value: no longer recomputed on rebase

    def delete(self, key: str) -> None:
        """Stage deleting ``key`` (a no-op at commit if it does not exist)."""
        self._check_writable()
        self._writes[key] = None
        self._merges.pop(key, None)

    def merge(self, key: str, change: Merge) -> str | None:
        """Stage a change of ``key`` computed from its current value; return the new value.

        Unlike :meth:`put` after a read, a merge is blind: it records no read,
        and when the commit is rebased over a concurrent commit the change is
        applied again to the newest value of ``key`` instead of conflicting.
        Appending files to a table is a merge, so concurrent appends to one
        table both commit. ``change`` maps the current value (None: absent) to
        the new one (None: delete); it may raise :class:`CommitConflictError`
        when the newest value makes it impossible (say, the table was dropped).
        """
        self._check_writable()
        current = self._writes[key] if key in self._writes else self.snapshot.get(key)
        value = change(current)
        if key not in self._writes or key in self._merges:
            self._merges.setdefault(key, []).append(change)
        self._writes[key] = value
        return value

    def _rebase_merges(self, base: Snapshot) -> None:
        """Recompute every merge-only key from its value in ``base``."""
        for key, changes in self._merges.items():
            value = base.get(key)
            for change in changes:
                value = change(value)
            self._writes[key] = value

    def stage_file(self, path: str, data: bytes) -> None:
        """Stage an immutable file (an object definition) written at commit."""
        self._check_writable()
        self._files[path] = data

    def change_definition(
        self, change: Callable[[LakehouseDefinition], LakehouseDefinition]
    ) -> None:
        """Stage a change of the lakehouse definition.

        ``change`` maps the current definition to the new one; it is applied
        again to the newest definition when the commit is rebased, so two
        concurrent changes (say, two exports) both take effect.
        """
        self._check_writable()
        previous = self._definition_change
        if previous is None:
            self._definition_change = change
        else:
            self._definition_change = lambda d: change(previous(d))

    # -- statement atomicity -----------------------------------------------------------

    def savepoint(self) -> Savepoint:
        """Remember the staged changes, so a failed statement can undo only its own."""
        self._check_active()
        return Savepoint(
            dict(self._writes),
            dict(self._files),
            self._definition_change,
            {key: list(changes) for key, changes in self._merges.items()},
        )

    def rollback_to(self, savepoint: Savepoint) -> None:
        """Restore the staged changes remembered by ``savepoint``.

        Reads and scanned ranges are kept: a conflict check on more than was
        needed is safe, one on less would not be.
        """
        self._check_active()
        self._writes = dict(savepoint.writes)
        self._files = dict(savepoint.files)
        self._definition_change = savepoint.definition_change
        self._merges = {key: list(changes) for key, changes in savepoint.merges.items()}

    # -- handing off (SAVE / LOAD TRANSACTION: lakehouse/handoff.py) -----------------

    def hand_off(self) -> HandOff:
        """The staged state, for SAVE TRANSACTION; the transaction is active until :meth:`mark_saved`."""
        self._check_active()
        if self._definition_change is not None:  # a function of the newest definition
            raise NotSupportedError(
                f"SAVE TRANSACTION of transaction {self.id}: it changes the lakehouse "
                "definition (an export, a retention setting or a branch), which a saved "
                "transaction cannot carry; COMMIT it here, or run that change on its own"
            )
        return HandOff(
            dict(self._writes), dict(self._files), set(self._reads), list(self._ranges),
            set(self._required), list(self._required_ranges),
            {key: list(changes) for key, changes in self._merges.items()},
        )  # fmt: skip

    def mark_saved(self) -> None:
        """Close this transaction: it was saved, and only its loader may commit it."""
        self._check_active()
        self._state = _State.SAVED
        self._writes, self._files, self._merges = {}, {}, {}  # the loader's now

    def adopt(self, txn_id: str, began_at_millis: int, state: HandOff) -> None:
        """Continue the saved transaction ``txn_id``: take its id, start time and ``state``."""
        self._check_active()
        self.id, self.began_at_millis = txn_id, began_at_millis
        self._writes, self._files, self._reads = state.writes, state.files, state.reads
        self._ranges, self._required = state.ranges, state.required
        self._required_ranges, self._merges = state.required_ranges, state.merges

    # -- ending ----------------------------------------------------------------------

    def commit(self, *, progress: Progress | None = None) -> Snapshot:
        """Commit the staged changes; return the version that holds them.

        A transaction without changes commits without writing anything and
        returns its pinned snapshot.

        Args:
            progress: called with (node files written, -1) as each new node
                file of the tree is written, and (n, n) once all are, just
                before the new version becomes visible. An attempt that loses
                the race and retries reports its own files from 0 again. If
                it raises, the commit is abandoned and the exception propagates.

        Raises:
            CommitConflictError: a concurrent commit conflicts (not retryable).
            RetriesExhaustedError: the retry policy ran out of attempts.
        """
        self._check_active()
        if not self.has_changes:
            self._state = _State.COMMITTED
            self.committed = self.snapshot
            return self.snapshot
        try:
            snap = self._commit_with_retries(progress)
        except BaseException:
            self._state = _State.ABORTED
            raise
        self._state = _State.COMMITTED
        self.committed = snap
        return snap

    def abort(self) -> None:
        """Discard the staged changes; nothing was written."""
        if self._state is _State.ACTIVE:
            self._state = _State.ABORTED
            # Files this transaction began writing are garbage now: let them
            # land (or fail) quietly, so no later commit waits on them.
            self.lakehouse.storage.forget_pending()

    def _commit_with_retries(self, progress: Progress | None) -> Snapshot:
        # The staged files are written while the tree is updated and the root
        # encoded (their I/O overlaps that CPU work); the root create waits
        # for them, so it never points at an incomplete file.
        storage = self.lakehouse.storage
        pending: dict[str, Future[None]] = {}

        def submit_files() -> None:
            # Merges re-run on rebase may stage new files: each is written once.
            # All pinned to this round before any starts (see Storage.concurrently).
            creates = {
                path: storage.this_round(partial(storage.create_unique, path, data))
                for path, data in self._files.items()
                if path not in pending
            }
            for path, create in creates.items():
                pending[path] = io_pool().submit(create)

        def files_written() -> None:
            for future in pending.values():
                future.result()  # re-raises the storage error of a failed write

        base = self.snapshot
        for attempt in range(self.retry.max_attempts):
            self.attempts = attempt + 1
            submit_files()
            definition = None
            if self._definition_change is not None:
                definition = self._definition_change(base.definition)
            each_file, before_root = node_file_progress(progress, files_written)
            try:
                return self.lakehouse.commit(
                    base,
                    self._writes,
                    txn_id=self.id,
                    definition=definition,
                    extra_system=commit_notes(self._author, self._message),
                    progress=each_file,
                    before_root=before_root,
                    # After the commit point, best effort, beside the hint:
                    # Kartothek's main metadata files.
                    after_root=partial(self._publish, base),
                )
            except CommitConflictError:
                pass  # lost the race for base.version + 1: see who won
            tried = base.version
            latest = self.lakehouse.latest_version()
            for version in range(base.version + 1, latest + 1):
                self._check_conflicts(self._intervening(version))
            if attempt + 1 == self.retry.max_attempts:
                raise RetriesExhaustedError(self.retry.max_attempts, tried)
            base = self.lakehouse.snapshot(latest)
            self._rebase_merges(base)
            time.sleep(self.retry.delay(attempt, _rng()))
        raise AssertionError("unreachable: the last attempt raises")

    def _publish(self, base: Snapshot, committed: Snapshot) -> None:
        if self.lakehouse.branch is not None:
            return  # what other readers trust (Kartothek's files) follows main only
        publish_after_commit(self.lakehouse, committed, self._writes, self._files, base=base)

    def _intervening(self, version: int) -> Snapshot:
        """Version ``version``, committed after this transaction's snapshot, to check.

        Raises:
            CommitConflictError: it was expired before this commit could read
                which keys it changed.
        """
        try:
            return self.lakehouse.snapshot(version)
        except NoSuchVersionError:
            raise CommitConflictError(
                f"commit conflict: version {version}, committed after this transaction's "
                f"snapshot (version {self.snapshot.version}), was expired before this commit "
                "could check it for conflicting changes. Nothing was committed; run the "
                "transaction again (it begins on the latest version)",
                version=version,
            ) from None

    def _check_conflicts(self, other: Snapshot) -> None:
        """Raise if the version ``other`` conflicts with this transaction."""
        if other.rollback_from_root is not None:
            raise self._conflict(
                None, other, "it rolled the lakehouse back, which may change any object"
            )
        changed = other.changed_keys()
        for key in sorted((changed & self._writes.keys()) - self._merges.keys()):
            raise self._conflict(key, other, "both transactions write it")
        for key in sorted(changed & self._required):
            raise self._conflict(key, other, "this transaction's changes depend on it")
        for key in sorted(changed):
            if _in_any(key, self._required_ranges):
                raise self._conflict(key, other, "this transaction's changes depend on its range")
        if self.isolation is not IsolationLevel.SERIALIZABLE:
            return
        for key in sorted(changed & self._reads):
            raise self._conflict(key, other, "this transaction read it")
        for key in sorted(changed):
            if _in_any(key, self._ranges):
                raise self._conflict(key, other, "it lies in a range this transaction listed")

    def _conflict(self, key: str | None, other: Snapshot, why: str) -> CommitConflictError:
        what = "the lakehouse" if key is None else self.describe_key(key)
        return CommitConflictError(
            f"commit conflict on {what}: version {other.version} changed it after this "
            f"transaction's snapshot (version {self.snapshot.version}) and {why} "
            f"({self.isolation.value}). Nothing was committed; run the transaction again",
            key=key,
            version=other.version,
        )

    def describe_key(self, key: str) -> str:
        """A human name for a tree key: ``namespace 'x'``, ``table 'x.y'`` or the raw key."""
        try:
            obj = decode_key(key, self.snapshot.definition.key_limits)
        except InvalidNameError:
            return f"key {key!r}"
        if obj.table is None:
            return f"namespace {obj.namespace!r}"
        return f"{obj.kind} '{obj.namespace}.{obj.table}'"

    def _check_active(self) -> None:
        if self._state is _State.SAVED:
            raise TransactionClosedError(
                f"transaction {self.id} was saved (SAVE TRANSACTION): this session can neither "
                f"continue nor commit it; run LOAD TRANSACTION '{self.id}' in the session "
                "that is to commit it, and BEGIN a new transaction here"
            )
        if self._state is not _State.ACTIVE:
            raise TransactionClosedError(
                f"transaction {self.id} is already {self._state.value}; begin a new one"
            )

    def _check_writable(self) -> None:
        self._check_active()
        if self.read_only:
            raise ReadOnlyError(
                f"transaction {self.id} is read-only; begin one without read_only to write"
            )
