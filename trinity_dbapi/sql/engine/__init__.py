"""The SQL engine: a connection's session and the modules that run each statement.

The driver calls one module, the front door :mod:`.dispatch` (``execute``,
``execute_many``, ``ingest``, ``arrow_schema``), with the connection's
:class:`~.session.Session`. Every import inside the engine points down this
list of floors, bottom to top (lazy and ``TYPE_CHECKING`` imports included;
each module's docstring names the modules it stands on):

1. ``sandbox``, ``control``, ``progress``, ``result``, ``duck_errors``,
   ``row_count``, ``predicates``: no engine module.
2. ``duckdb_pool`` (on ``sandbox``); ``duck_run``, SQL text run in DuckDB
   (on ``duck_errors``); ``catalog_pushdown`` (on ``predicates``).
3. ``session``: a connection's state and transactions, its DuckDB
   connection (on ``duckdb_pool``, ``control``, ``progress``); it names no
   statement and no module above it. ``native_scan``: what DuckDB scans for
   a user table (on ``duck_run``, ``duck_errors``).
4. On the session: ``view_expansion`` (a view reference as its query, as of
   the version read), ``catalog_answer``, ``ddl``, ``rewrite_files``.
5. ``query`` (on ``view_expansion``, ``native_scan``, ``duck_run``,
   ``row_count``, ``catalog_pushdown``, ``predicates``); ``kartothek_import``
   (on ``ddl``); ``auto_compact`` (on ``rewrite_files``).
6. On ``query``: ``dml`` (and ``ddl``), ``merge_keys``, ``show``, ``views``
   (CREATE / DROP / SHOW VIEWS); ``procedures`` (on ``kartothek_import``,
   ``rewrite_files``).
7. ``merge`` (on ``dml``, ``merge_keys``).
8. ``dispatch``: the statement handler tables and the MERGE routing; it
   registers ``auto_compact`` with the session as work after a commit
   (``session.register_after_commit``). No engine module imports it.
"""
