"""The SQL engine: a connection's session and the modules that run each statement.

The driver calls one module, the front door :mod:`.dispatch` (``execute``,
``execute_many``, ``ingest``, ``arrow_schema``), with the connection's
:class:`~.session.Session`.

Floors, bottom to top: a module imports only modules on floors below its
own, in any form (lazy and ``TYPE_CHECKING`` imports included); each module's
docstring ends with the ones it imports.

1. ``sandbox``, ``duckdb_lifecycle`` (the sessions' DuckDB at interpreter exit
   and in a forked child), ``control``, ``progress``, ``result``, ``duck_errors``,
   ``row_count``, ``predicates``, ``file_access`` (which local files COPY may
   use), ``file_formats`` (CSV, Parquet and NDJSON files as Arrow batches and
   back), ``stand_in`` (what a session needs of the lakehouse its first
   write creates) (no engine module)
2. ``duckdb_pool`` (on ``sandbox`` and ``duckdb_lifecycle``), ``duck_run`` (SQL text run in DuckDB, on
   ``duck_errors``), ``catalog_pushdown`` (on ``predicates``)
3. ``session`` (a connection's state and transactions and its DuckDB
   connection; it names no statement and no module above it),
   ``native_scan`` (what DuckDB scans for a user table)
4. ``view_expansion`` (a view reference as its query, as of the version
   read), ``catalog_answer``, ``ddl``, ``clones`` (``CREATE TABLE ... CLONE``),
   ``rewrite_files``, ``suggest`` ("did you mean" for a missing table or
   namespace), ``table_changes`` (``system.table_changes``), ``saved`` (SAVE
   and LOAD TRANSACTION), ``refs`` (branch and tag statements) (all on the
   session)
5. ``query`` (on the expansion, scans, pushdown and predicates),
   ``kartothek_import`` (on ``ddl``), ``auto_compact`` (on ``rewrite_files``)
6. ``dml``, ``merge_keys``, ``show``, ``views`` (CREATE / DROP / SHOW VIEWS),
   ``procedures`` (these on ``query`` and the floors below it)
7. ``merge`` (on ``dml`` and ``merge_keys``), ``copy`` (COPY FROM and TO,
   on ``dml``, ``query`` and the file modules)
8. ``dispatch`` (the front door: the statement handler tables and the MERGE
   routing; it registers automatic compaction with the session as work
   after a commit, ``session.register_after_commit``; no engine module
   imports it)
"""
