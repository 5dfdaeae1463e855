"""The PEP 249 cursor: statements in, rows out (as tuples or as Arrow).

Statements run through the engine's front door
(:mod:`trinity_dbapi.sql.engine.dispatch`) with the connection's session.
The cursor knows its connection only as an :class:`Owner` (its session, its
lock, whether it is closed): :mod:`.connection` makes cursors and sits
above this module.

Imports from dbapi/: preview, pyvalues; inside functions: params, types.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from trinity_dbapi.dbapi import preview, pyvalues
from trinity_dbapi.errors import DataError, Error, InterfaceError, InternalError, ProgrammingError

if TYPE_CHECKING:
    import pyarrow as pa
    from typing_extensions import Self  # typing.Self is Python 3.11+

    from trinity_dbapi.sql.engine.result import Result
    from trinity_dbapi.sql.engine.session import Session


class Owner(Protocol):
    """What a cursor uses of its connection (a :class:`~.connection.Connection`)."""

    #: The engine session statements run in.
    session: Session
    #: Held while a statement runs: a connection runs one statement at a time.
    lock: Any

    @property
    def closed(self) -> bool:
        """Whether the connection is closed."""
        ...


class Cursor:
    """A PEP 249 cursor of a :class:`~trinity_dbapi.dbapi.connection.Connection` (its owner).

    Results are held as an Arrow table: :meth:`fetch_arrow_table` and
    :meth:`fetch_record_batch` hand it over without conversion, the
    ``fetch*`` methods convert rows to tuples on demand. :meth:`arrow`,
    :meth:`df` and :meth:`pl` are duckdb's short forms; printing the cursor
    (``repr``, a notebook's ``_repr_html_``) shows the next rows without
    taking them.
    """

    def __init__(self, connection: Owner) -> None:
        self.connection = connection
        self.arraysize = 1
        self._reader: pa.RecordBatchReader | None = None
        self._batch: pa.RecordBatch | None = None  # the batch rows are fetched from
        self._offset = 0  # rows of _batch already fetched
        self._pending: list[pa.RecordBatch] = []  # rows put back, fetched before the reader's
        self._exhausted = False
        self._total: int | None = None  # the result's rows, when it was whole from the start
        self._position = 0
        self._description: list[tuple[Any, ...]] | None = None
        self.rowcount = -1
        self.closed = False
        #: Set by SQLAlchemy's dialect on cursors it opens for ``stream_results``
        #: (as other drivers' server-side cursors); informational: every
        #: cursor streams its rows from DuckDB.
        self.server_side = False

    # -- attributes -----------------------------------------------------------------

    @property
    def description(self) -> list[tuple[Any, ...]] | None:
        """Seven-item column descriptions of the last result set, or None."""
        if self._description is None and self._reader is not None:
            from trinity_dbapi.dbapi.types import describe

            self._description = describe(self._reader.schema)
        return self._description

    @property
    def rownumber(self) -> int | None:
        """Index of the next row to fetch (PEP 249 extension)."""
        return None if self._reader is None else self._position

    # -- executing ----------------------------------------------------------------------

    def execute(self, operation: str, parameters: Any = None) -> Cursor:
        """Execute one SQL statement with ``?`` parameters bound as values.

        Raises:
            SQLSyntaxError: the text does not parse (line, column, snippet).
            ProgrammingError: wrong parameters, missing objects, bad names.
            NotSupportedError: a statement outside the supported grammar.
            OperationalError: commit conflicts, storage failures.
        """
        from trinity_dbapi.dbapi.params import check_params
        from trinity_dbapi.sql.engine import dispatch

        params = check_params(parameters)
        parsed = self._parse_one(operation)
        self._run(lambda: dispatch.execute(self.connection.session, parsed, params))
        return self

    def executemany(self, operation: str, seq_of_parameters: Any) -> Cursor:
        """Execute one statement once per parameter sequence, as one statement.

        The statement is parsed once; all sets apply or none. An
        ``INSERT ... VALUES (?, ...)`` writes every set as a row of one batch
        (one commit in autocommit mode). ``rowcount`` is the total of the
        row counts (or -1 if any is unknown).
        """
        from trinity_dbapi.dbapi.params import check_seq_of_params
        from trinity_dbapi.sql.engine import dispatch

        all_params = check_seq_of_params(seq_of_parameters)
        parsed = self._parse_one(operation)
        self._run(lambda: dispatch.execute_many(self.connection.session, parsed, all_params))
        self._clear_rows()
        return self

    def ingest(self, table: str, data: Any, *, namespace: str | None = None) -> int:
        """Append Arrow data to a table as one write: the fast path for bulk loads.

        Like ADBC's ``adbc_ingest`` in append mode: one set of data files and,
        in autocommit mode, one commit, however many rows. Columns are matched
        by name (missing nullable ones are NULL) and checked like an INSERT's
        (``IntegrityError`` for NULL in a NOT NULL column, ``DataError`` for a
        value that does not fit). The rows written are reported to the
        connection's progress handler as they go (``Connection.progress``).

        Args:
            table: the table name (not SQL text: no quoting).
            data: a ``pa.Table``, ``pa.RecordBatch``, ``pa.RecordBatchReader``
                (written as it is read), or any object with
                ``__arrow_c_stream__`` such as a pandas DataFrame.
            namespace: the table's namespace; the connection's current one by default.

        Returns:
            The number of rows written (also in ``rowcount``).

        Example:
            >>> import pyarrow as pa, trinity_dbapi
            >>> conn = trinity_dbapi.connect("memory://doc-ingest", autocommit=True)
            >>> cur = conn.cursor()
            >>> _ = cur.execute("CREATE TABLE t (id INT8, name VARCHAR)")
            >>> cur.ingest("t", pa.table({"id": [1, 2], "name": ["a", "b"]}))
            2
        """
        from trinity_dbapi.sql.engine import dispatch
        from trinity_dbapi.sql.model import TableName

        if not isinstance(table, str) or not table:
            raise ProgrammingError(f"ingest() needs a table name, not {table!r}")
        name = TableName(namespace, table)
        self._run(lambda: dispatch.ingest(self.connection.session, name, data))
        self._clear_rows()
        return self.rowcount

    def _parse_one(self, operation: object) -> Any:
        self._check_open()
        if not isinstance(operation, str):
            raise ProgrammingError(
                f"the operation must be a SQL string, not {type(operation).__name__}"
            )
        from trinity_dbapi.sql.statements import parse

        statements = guard(lambda: parse(operation))
        if len(statements) != 1:
            raise ProgrammingError(
                f"execute() runs exactly one statement, and the text holds {len(statements)}; "
                "split it, or run a script with executescript()"
            )
        return statements[0]

    def executescript(self, script: str) -> Cursor:
        """Execute several ``;``-separated statements without parameters (like sqlite3).

        The cursor holds the last statement's result.
        """
        self._check_open()
        from trinity_dbapi.sql.engine import dispatch
        from trinity_dbapi.sql.statements import parse

        for parsed in guard(lambda: parse(script)):
            self._run(lambda p=parsed: dispatch.execute(self.connection.session, p, ()))
        return self

    def _run(self, work: Any) -> None:
        self._check_open()
        self._clear()
        with self.connection.lock:
            result: Result = guard(work)
        rows = result.table
        if rows is not None:
            streamed = isinstance(rows, _reader_type())
            self._reader = rows if streamed else rows.to_reader()
            self._total = None if streamed else rows.num_rows
        self.rowcount = result.rowcount

    def _clear_rows(self) -> None:
        """executemany produces no result set, only a row count."""
        self._reader = None
        self._description = None

    def _clear(self) -> None:
        self._reader = None
        self._batch = None
        self._offset = 0
        self._pending = []
        self._exhausted = False
        self._total = None
        self._description = None
        self._position = 0
        self.rowcount = -1

    # -- fetching -------------------------------------------------------------------------
    #
    # Rows come from a record batch reader (DuckDB streams query results), one
    # batch at a time: the fetch methods never hold more than the current batch
    # unless asked for everything. A fetch that raises DataError (a value Python
    # cannot hold: pyvalues.py) takes no rows: what it took is put back, so the
    # rows before the value can be fetched in smaller steps and all of them as
    # Arrow, as a fetch that never happened would leave them.

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row, or None when the result is exhausted."""
        rows = self.fetchmany(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        """The next ``size`` rows (``arraysize`` by default)."""
        count = self.arraysize if size is None else size
        if count < 0:
            raise ProgrammingError(f"fetchmany size must be 0 or more, not {count}")
        rows: list[tuple[Any, ...]] = []
        taken: list[pa.RecordBatch] = []
        with self._reading():
            while len(rows) < count:
                chunk = self._take(count - len(rows))
                if chunk is None:
                    break
                taken.append(chunk)
                try:
                    rows.extend(pyvalues.rows(chunk, self._position - chunk.num_rows))
                except DataError:
                    self._put_back(taken)
                    raise
        return rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        """Every remaining row."""
        table = self.fetch_arrow_table()
        try:
            return pyvalues.rows(table, self._position - table.num_rows)
        except DataError:
            self._put_back(table.to_batches())
            raise

    def fetch_arrow_table(self) -> pa.Table:
        """The remaining rows as one Arrow table."""
        import pyarrow as pa

        reader = self._current()
        batches = []
        with self._reading():
            while (chunk := self._take(None)) is not None:
                batches.append(chunk)
        return pa.Table.from_batches(batches, schema=reader.schema)

    def fetch_record_batch(self, rows_per_batch: int = 1_000_000) -> pa.RecordBatchReader:
        """The remaining rows as a reader of record batches of at most ``rows_per_batch``.

        Batches are pulled from the query as the reader is read.
        """
        import pyarrow as pa

        if rows_per_batch < 1:
            raise ProgrammingError(f"rows_per_batch must be 1 or more, not {rows_per_batch}")
        schema = self._current().schema

        def batches() -> Iterator[pa.RecordBatch]:
            while (chunk := self._take(rows_per_batch)) is not None:
                yield chunk

        return pa.RecordBatchReader.from_batches(schema, batches())

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The remaining rows as an Arrow C stream: the Arrow PyCapsule interface.

        Any Arrow consumer takes the result without Python objects:
        ``pyarrow.table(cursor)``, ``duckdb.from_arrow(cursor)``, polars'
        ``pl.DataFrame(cursor)``, pandas 3's ``DataFrame.from_arrow(cursor)``.
        Rows are pulled from the query as the stream is read and are then
        consumed, as with :meth:`fetch_record_batch`.

        Args:
            requested_schema: a schema capsule the consumer asks for; passed
                on to pyarrow, which casts to it where it can.
        """
        return self.fetch_record_batch().__arrow_c_stream__(requested_schema)

    def fetch_df(self) -> Any:
        """The remaining rows as a pandas DataFrame (pandas must be installed).

        Raises:
            InterfaceError: pandas is not installed (the rows are not taken).
        """
        self._current()
        _optional("pandas", "df() and fetch_df()")
        return self.fetch_arrow_table().to_pandas()

    # -- duckdb's short forms ---------------------------------------------------------------

    def arrow(self) -> pa.Table:
        """The remaining rows as a ``pyarrow.Table``: :meth:`fetch_arrow_table`, as duckdb says it."""
        return self.fetch_arrow_table()

    def df(self) -> Any:
        """The remaining rows as a pandas DataFrame: :meth:`fetch_df`, as duckdb says it."""
        return self.fetch_df()

    def pl(self) -> Any:
        """The remaining rows as a polars DataFrame, as duckdb's ``pl()`` (polars must be installed).

        Raises:
            InterfaceError: polars is not installed (the rows are not taken).
        """
        self._current()
        polars = _optional("polars", "pl()")
        return polars.from_arrow(self.fetch_arrow_table())

    # -- printing: a preview that takes no row ------------------------------------------------

    def __repr__(self) -> str:
        """The next rows of the pending result and its size when known; no row is taken."""
        state = self._no_rows_why()
        if state is not None:
            return f"<trinity_dbapi Cursor: {state}>"
        try:
            return preview.text(self._preview())
        except Error as exc:
            return f"<trinity_dbapi Cursor: a result whose rows could not be read: {exc}>"

    def _repr_html_(self) -> str | None:
        """What a notebook shows: the next rows as an HTML table; no row is taken.

        None (the notebook then shows ``repr``) without a result set.
        """
        if self._no_rows_why() is not None:
            return None
        try:
            return preview.html_table(self._preview())
        except Error:
            return None

    def _no_rows_why(self) -> str | None:
        """Why there is nothing to preview (closed, no result set), or None."""
        if self.closed:
            return "closed"
        if self.connection.closed:
            return "its connection is closed"
        if self._reader is None:
            count = f" (rowcount {self.rowcount})" if self.rowcount >= 0 else ""
            return f"no result set{count}"
        return None

    def _preview(self) -> preview.Preview:
        """Peek at the next rows: read them, then put them back to be fetched first.

        A streamed result cannot be read again, so the batches read here are
        kept (``_put_back``) and every fetch serves them before reading on.
        """
        import pyarrow as pa

        limit = preview.PREVIEW_ROWS
        schema = self._current().schema
        taken: list[pa.RecordBatch] = []
        count = 0
        try:
            with self._reading():
                while count <= limit:  # one row more: whether rows follow those shown
                    chunk = self._take(limit + 1 - count)
                    if chunk is None:
                        break
                    taken.append(chunk)
                    count += chunk.num_rows
        finally:
            self._put_back(taken)
        shown = pa.Table.from_batches(taken, schema=schema).slice(0, limit)
        return preview.Preview(
            names=schema.names,
            rows=_shown_rows(shown),
            first=self._position,
            more=count > limit,
            total=self._known_total(),
        )

    def _known_total(self) -> int | None:
        """The result's row count if known: whole from the start, or read to its end."""
        if self._total is not None or not self._exhausted:
            return self._total
        left = sum(batch.num_rows for batch in self._pending)
        if self._batch is not None:
            left += self._batch.num_rows - self._offset
        return self._position + left

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    def _current(self) -> pa.RecordBatchReader:
        self._check_open()
        if self._reader is None:
            raise ProgrammingError(
                "no result set to fetch from: execute a statement that returns rows "
                "(such as SELECT or SHOW) first"
            )
        return self._reader

    def _take(self, limit: int | None) -> pa.RecordBatch | None:
        """Up to ``limit`` (None: a whole batch's worth of) next rows; None at the end."""
        reader = self._current()
        while self._batch is None or self._offset >= self._batch.num_rows:
            if self._pending:
                self._batch = self._pending.pop(0)
                self._offset = 0
                continue
            if self._exhausted:
                return None
            try:
                with self._reading():
                    self._batch = guard(reader.read_next_batch)
            except StopIteration:
                self._exhausted = True
                self._batch = None
                return None
            self._offset = 0
        available = self._batch.num_rows - self._offset
        take = available if limit is None else min(limit, available)
        chunk = self._batch.slice(self._offset, take)
        self._offset += take
        self._position += take
        return chunk

    def _put_back(self, chunks: list[pa.RecordBatch]) -> None:
        """Make ``chunks``, the rows a failed fetch took in order, the next rows again."""
        rest = []
        if self._batch is not None and self._offset < self._batch.num_rows:
            rest.append(self._batch.slice(self._offset))
        self._pending = [*chunks, *rest, *self._pending]
        self._batch = None
        self._offset = 0
        self._position -= sum(chunk.num_rows for chunk in chunks)

    def _reading(self) -> Any:
        """One fetch call: reading a streamed result runs DuckDB, interruptible and timed."""
        return self.connection.session.control.running("reading the query's rows")

    # -- the rest of PEP 249 -------------------------------------------------------------

    def setinputsizes(self, sizes: Sequence[Any]) -> None:
        """Accepted and ignored (PEP 249 allows it): values carry their own types."""

    def setoutputsize(self, size: int, column: int | None = None) -> None:
        """Accepted and ignored (PEP 249 allows it)."""

    def close(self) -> None:
        """Close the cursor; later use raises InterfaceError.

        ``rowcount`` keeps the last statement's count (as sqlite3's does):
        SQLAlchemy reads it after closing the cursor of an INSERT.
        """
        rowcount = self.rowcount
        self._clear()
        self.rowcount = rowcount
        self.closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self.closed:
            raise InterfaceError("the cursor is closed: create a new one with connection.cursor()")
        if self.connection.closed:
            raise InterfaceError("the connection is closed: open a new one with connect()")


def _optional(module: str, what: str) -> Any:
    """The optional package ``module``, or an InterfaceError saying how to get it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise InterfaceError(
            f"cursor.{what} needs {module}, which is not installed: pip install {module}; "
            "or take the rows as Arrow with cursor.arrow(), or as tuples with fetchall()"
        ) from None


def _shown_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """A preview's rows as ``fetchall`` gives them; a value Python cannot hold as its text."""
    try:
        return pyvalues.rows(table)
    except DataError:
        pass
    columns: list[list[Any]] = []
    for name, column in zip(table.schema.names, table.columns, strict=True):
        try:
            columns.append(pyvalues.pylist(column, name=name))
        except DataError:
            columns.append(_as_text(column.combine_chunks()))
    return list(zip(*columns, strict=True))


def _as_text(values: pa.Array) -> list[str | None]:
    """A column's values as DuckDB writes them, for a preview of what Python cannot hold."""
    import pyarrow as pa

    from trinity_dbapi.tables import temporal

    if temporal.kind_of(values.type) is not None:  # past year 9999, infinite, 24:00:00...
        valid = values.is_valid().to_pylist()
        return [temporal.text(values, i) if ok else None for i, ok in enumerate(valid)]
    try:
        return values.cast(pa.string()).to_pylist()  # type: ignore[no-any-return]
    except (pa.ArrowException, ValueError, OverflowError):
        return ["?"] * len(values)  # a nested value: the preview is no place to fail


def _reader_type() -> type:
    import pyarrow as pa

    return pa.RecordBatchReader


def guard(work: Any) -> Any:
    """Run ``work``; any exception outside our hierarchy becomes an InternalError.

    PEP 249 callers catch ``trinity_dbapi.Error``; nothing else may escape,
    whatever the input. Such an exception is a bug of ours, and the message
    says so.
    """
    try:
        return work()
    except (Error, StopIteration):
        raise
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except Exception as exc:  # the one place that converts
        raise InternalError(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in trinity-dbapi, "
            "please report it with the statement that caused it"
        ) from exc
