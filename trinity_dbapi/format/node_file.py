"""Node files: one TrinityLake tree node as an Arrow IPC file (seed 001).

Every node file has the schema ``key, value, pnode, txn`` (nullable strings)
and three sections, top to bottom:

1. system-internal rows: ``key`` and ``value`` non-null (``n_keys``,
   ``created_at_millis``, and on a root ``lakehouse_def``, ``previous_root``,
   ``rollback_from_root``); any order, unknown keys tolerated;
2. the node key table, exactly ``order`` rows: a first row with NULL key and
   value whose ``pnode`` points at the leftmost child (NULL on a leaf), then one
   row per key (key, value, pointer to the child right of the key), then
   all-NULL padding rows;
3. the write buffer: one row per message, key and txn non-null, pnode NULL,
   value NULL meaning "delete the key".

The reader checks all of this and raises :class:`CorruptFileError` naming the
file for any violation, so a damaged or foreign file is never half-trusted.
That includes the values of the known system rows (numbers are numbers, root
pointers name root node files) and every child pointer (a followable
location): Arrow IPC has no checksum, and a damaged pointer found later would
be blamed on the file it names, or on the user, rather than on this file.

Imports from format/: keys, locations, paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.locations import location_problem
from trinity_dbapi.format.paths import root_node_version

if TYPE_CHECKING:
    import pyarrow as pa

#: Largest ``created_at_millis`` a reader accepts: the last millisecond of year
#: 9999, the end of the timestamps Python and DuckDB show.
MAX_CREATED_AT_MILLIS = 253_402_300_799_999

#: System rows holding a root node file location, and rows holding any location.
_ROOT_POINTERS = (system_keys.PREVIOUS_ROOT, system_keys.ROLLBACK_FROM_ROOT)
_POINTERS = (system_keys.LAKEHOUSE_DEF, *_ROOT_POINTERS)

#: Body compression of written node files; readers accept any Arrow IPC codec.
DEFAULT_COMPRESSION = "zstd"
COMPRESSIONS = ("zstd", "lz4", "none")


class Message(NamedTuple):
    """A write-buffer message: set ``key`` to ``value``, or delete it if None."""

    key: str
    value: str | None
    txn: str


@dataclass
class NodeData:
    """The decoded content of one node file.

    Attributes:
        system: system-internal rows other than ``n_keys`` (which is derived
            from ``keys`` when writing and checked when reading).
        keys: the node's keys, strictly ascending.
        values: one value per key.
        children: ``len(keys) + 1`` child node paths, or None for a leaf.
        buffer: write-buffer messages, oldest first.
    """

    system: dict[str, str] = field(default_factory=dict)
    keys: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    children: list[str] | None = None
    buffer: list[Message] = field(default_factory=list)
    #: Optional cache: messages and the Arrow table holding exactly them, as
    #: read or last written. When ``buffer`` still starts with those message
    #: objects, encoding converts only the messages after them (a root's
    #: buffer grows by one transaction per commit).
    buffer_arrow: tuple[list[Message], Any] | None = field(default=None, compare=False)


def _schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            pa.field("key", pa.string()),
            pa.field("value", pa.string()),
            pa.field("pnode", pa.string()),
            pa.field("txn", pa.string()),
        ]
    )


def encode_node(node: NodeData, order: int, *, compression: str = DEFAULT_COMPRESSION) -> bytes:
    """Serialize ``node`` into Arrow IPC file bytes with a key table of ``order`` rows."""
    return encode_node_and_buffer(node, order, compression=compression)[0]


def encode_node_and_buffer(
    node: NodeData, order: int, *, compression: str = DEFAULT_COMPRESSION
) -> tuple[bytes, pa.Table]:
    """Like :func:`encode_node`, also returning the Arrow table of the write buffer
    (to cache for the next encoding of a node that starts with the same buffer)."""
    import pyarrow as pa

    n = len(node.keys)
    if n > order - 1:
        raise ValueError(f"a node of order {order} holds at most {order - 1} keys, not {n}")
    system = {k: v for k, v in node.system.items() if k != system_keys.N_KEYS}
    system[system_keys.N_KEYS] = str(n)
    pad = order - 1 - n
    children: list[str | None] = (
        list(node.children) if node.children is not None else [None] * (n + 1)
    )
    head = pa.table(
        [
            pa.array([*system, None, *node.keys, *([None] * pad)], pa.string()),
            pa.array([*system.values(), None, *node.values, *([None] * pad)], pa.string()),
            pa.array([*([None] * len(system)), *children, *([None] * pad)], pa.string()),
            pa.nulls(len(system) + order, pa.string()),
        ],
        schema=_schema(),
    )
    buffer = _buffer_table(node.buffer, node.buffer_arrow)
    table = pa.concat_tables([head, buffer]).combine_chunks()
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=None if compression == "none" else compression)
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    # A slice of the combined table: one chunk, so caches never pile chunks up.
    return sink.getvalue().to_pybytes(), table.slice(head.num_rows)


def _buffer_table(buffer: list[Message], cached: tuple[list[Message], Any] | None) -> pa.Table:
    import pyarrow as pa

    start, parts = 0, []
    if cached is not None:
        messages, table = cached
        # A list comparison of the very same objects is an identity check per item.
        if len(messages) <= len(buffer) and buffer[: len(messages)] == messages:
            start, parts = len(messages), [table]
    rest = buffer[start:]
    if rest or not parts:
        keys, values, txns = zip(*rest) if rest else ((), (), ())
        parts.append(
            pa.table(
                [
                    pa.array(keys, pa.string()),
                    pa.array(values, pa.string()),
                    pa.nulls(len(rest), pa.string()),
                    pa.array(txns, pa.string()),
                ],
                schema=_schema(),
            )
        )
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


def decode_node(data: bytes, path: str, order: int) -> NodeData:
    """Parse and validate a node file; ``path`` only names the file in errors.

    Raises:
        CorruptFileError: the bytes are not a valid node file of this order.
    """
    import pyarrow as pa

    try:
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
        # Arrow checks offsets but not UTF-8 when reading: without the full
        # validation a changed byte in a string fails later, in to_pylist.
        table.validate(full=True)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CorruptFileError(path, f"not a readable Arrow IPC file ({exc})") from exc
    if table.schema.names != ["key", "value", "pnode", "txn"] or not all(
        pa.types.is_string(t) or pa.types.is_large_string(t) for t in table.schema.types
    ):
        raise CorruptFileError(
            path, f"schema is {table.schema.names}, expected string columns key, value, pnode, txn"
        )
    cols = [table.column(i).to_pylist() for i in range(4)]
    decoded = _Parser(path, order, *cols).parse()
    if decoded.buffer and all(pa.types.is_string(t) for t in table.schema.types):
        start = len(table) - len(decoded.buffer)
        decoded.buffer_arrow = (list(decoded.buffer), table.slice(start))
    return decoded


@dataclass
class _Parser:
    path: str
    order: int
    key: list[str | None]
    value: list[str | None]
    pnode: list[str | None]
    txn: list[str | None]

    def fail(self, problem: str) -> CorruptFileError:
        return CorruptFileError(self.path, problem)

    def parse(self) -> NodeData:
        start = self._key_table_start()
        system = {self.key[i]: self.value[i] for i in range(start)}
        n = self._n_keys(system)
        self._check_system(system)
        end = start + self.order
        if len(self.key) < end:
            raise self.fail(
                f"the node key table has {len(self.key) - start} rows, expected exactly "
                f"{self.order} (the lakehouse order)"
            )
        keys, values, children = self._key_table(start, n)
        buffer = self._buffer(end)
        del system[system_keys.N_KEYS]
        return NodeData(system, keys, values, children, buffer)  # type: ignore[arg-type]

    def _key_table_start(self) -> int:
        for i, (k, v) in enumerate(zip(self.key, self.value)):
            if k is None and v is None:
                return i
            if k is None or v is None:
                raise self.fail(f"system row {i} has a NULL key or value")
        raise self.fail("no row with NULL key and NULL value starts the node key table")

    def _n_keys(self, system: dict[str | None, str | None]) -> int:
        raw = system.get(system_keys.N_KEYS)
        if raw is None:
            raise self.fail("the system row 'n_keys' is missing")
        try:
            n = int(raw)
        except ValueError:
            raise self.fail(f"'n_keys' is {raw!r}, not a number") from None
        if not 0 <= n <= self.order - 1:
            raise self.fail(f"'n_keys' is {n}, outside 0..{self.order - 1} for order {self.order}")
        return n

    def _check_system(self, system: dict[str | None, str | None]) -> None:
        """The known system rows hold what they must; unknown rows are tolerated."""
        created = system.get(system_keys.CREATED_AT_MILLIS)
        if created is not None and not _is_number(created, MAX_CREATED_AT_MILLIS):
            raise self.fail(
                f"'created_at_millis' is {created[:40]!r}, not milliseconds since the epoch "
                f"in 0..{MAX_CREATED_AT_MILLIS}"
            )
        exported = system.get(system_keys.EXPORTED_FROM_VERSION)
        if exported is not None and not _is_number(exported, 2**32 - 1):
            raise self.fail(f"'exported_from_version' is {exported[:40]!r}, not a version number")
        for key in _POINTERS:
            value = system.get(key)
            if value is None:
                continue
            problem = location_problem(value)
            if (
                problem is None
                and key in _ROOT_POINTERS
                and root_node_version(value.rpartition("/")[2]) is None
            ):
                problem = "it does not name a root node file"
            if problem is not None:
                raise self.fail(f"the system row {key!r} holds {value[:200]!r}: {problem}")

    def _check_pointer(self, row: int, pointer: str) -> None:
        problem = location_problem(pointer)
        if problem is not None:
            raise self.fail(f"the child pointer of key row {row} is {pointer[:200]!r}: {problem}")

    def _key_table(self, start: int, n: int) -> tuple[list[str], list[str], list[str] | None]:
        leftmost = self.pnode[start]
        internal = leftmost is not None
        if self.txn[start] is not None:
            raise self.fail("the first node key table row has a transaction ID")
        keys: list[str] = []
        values: list[str] = []
        children: list[str] = [leftmost] if leftmost is not None else []
        if leftmost is not None:
            self._check_pointer(0, leftmost)
        for i in range(start + 1, start + 1 + n):
            k, v, p = self.key[i], self.value[i], self.pnode[i]
            if k is None or v is None:
                raise self.fail(f"key row {i - start} of {n} ('n_keys') has a NULL key or value")
            if (p is not None) != internal or self.txn[i] is not None:
                raise self.fail(f"key row {i - start} has an inconsistent child pointer or txn")
            if keys and keys[-1] >= k:
                raise self.fail(f"keys are not strictly ascending at key row {i - start}")
            keys.append(k)
            values.append(v)
            if p is not None:
                self._check_pointer(i - start, p)
                children.append(p)
        for i in range(start + 1 + n, start + self.order):
            if (self.key[i], self.value[i], self.pnode[i], self.txn[i]) != (None,) * 4:
                raise self.fail(
                    f"row {i - start} of the node key table should be empty padding: 'n_keys' "
                    f"says {n} keys"
                )
        return keys, values, children if internal else None

    def _buffer(self, end: int) -> list[Message]:
        buffer = []
        for i in range(end, len(self.key)):
            k, t = self.key[i], self.txn[i]
            if k is None or t is None or self.pnode[i] is not None:
                raise self.fail(
                    f"write buffer row {i - end} needs a key and a txn and no pnode "
                    "(or the node key table is longer than the lakehouse order)"
                )
            buffer.append(Message(k, self.value[i], t))
        return buffer


def _is_number(text: str, maximum: int) -> bool:
    """Whether ``text`` is a plain decimal number in ``0..maximum``.

    ASCII digits only (``str.isdigit`` accepts other scripts' digits), and
    the length is checked before ``int`` so thousands of digits cost nothing.
    """
    digits = text.lstrip("0") or "0"
    return (
        text.isascii()
        and text.isdigit()
        and len(digits) <= len(str(maximum))
        and int(digits) <= maximum
    )
