"""PySpark: the ``trinitylake`` data source, and the lakehouse's tables as Spark views.

``register(spark)`` makes ``spark.read.format("trinitylake")`` and
``df.write.format("trinitylake")`` available (PySpark 4's Python data source
API); ``register_views(spark, uri)`` registers every table of a lakehouse (or
of the namespaces given), and its catalog tables, as temporary views for Spark SQL. Importing this
package imports PySpark; ``import trinity_dbapi`` does not. See ``docs/spark.md``.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``options`` (the data source's options), ``catalog_filters`` (Spark's
   pushed filters as a catalog scope), ``example``
2. ``read`` (scans)
3. ``write`` (appends and overwrites, one commit each)
4. ``source`` (the ``trinitylake`` data source)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from trinity_dbapi.spark.source import TrinityLakeDataSource

__all__ = [
    "ARROW_BYTES_CONF",
    "PUSHDOWN_CONF",
    "TrinityLakeDataSource",
    "register",
    "register_views",
]


#: The Spark setting that lets Python data sources take filters (off by default).
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
#: The Spark setting that caps the bytes of each Arrow batch sent to Python
#: workers. At any value but :data:`NO_BYTE_LIMIT` Spark measures the batch
#: after every row it adds, which cost more than writing the Parquet files
#: (benchmarks/spark_io.py: 5M rows reached the Python tasks in 1.80 s
#: instead of 0.57 s).
ARROW_BYTES_CONF = "spark.sql.execution.arrow.maxBytesPerBatch"
#: Spark's value for "no byte limit" (Int.MaxValue, the one value it checks for).
NO_BYTE_LIMIT = "2147483647"


def register(
    spark: Any, *, filter_pushdown: bool = True, lift_arrow_byte_limit: bool = True
) -> None:
    """Register the ``trinitylake`` data source with a SparkSession.

    Args:
        spark: the SparkSession.
        filter_pushdown: turn on ``spark.sql.python.filterPushdown.enabled``
            for the session, which file pruning needs (Spark refuses a Python
            reader that takes filters while it is off). With False the
            setting is left as it is, and reads follow it: pruning when it is
            on, every file when it is off. Change the setting later and
            register again (or read with ``.option("pushFilters", ...)``).
        lift_arrow_byte_limit: unless the session sets
            ``spark.sql.execution.arrow.maxBytesPerBatch`` itself, set it to
            2147483647, Spark's value for no byte limit: Arrow batches stay
            capped at ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows
            (10,000 by default), and Spark stops measuring each batch after
            every row, which made writes 2.2x slower. It applies to all of the
            session's Arrow-based Python code (pandas UDFs, ``mapInArrow``);
            pass False to keep Spark's byte cap, e.g. for rows of megabytes.

    Call it again in each other Python thread that reads or writes: it also
    makes the session that thread's active one, where Spark looks data
    sources up (otherwise ``save()`` there fails with DATA_SOURCE_NOT_FOUND).

    It also adds the names of the options that may hold credentials
    (``storageOptions``, ``storage.account_key``, ``storage.connection_string``,
    ``storage.secret``, ...) to the session's
    ``spark.sql.redaction.options.regex``, so the plans Spark prints show
    ``*********(redacted)`` for their values.
    """
    from trinity_dbapi.spark.source import TrinityLakeDataSourceWithoutPushdown

    _activate(spark)
    _hide_secret_options(spark)
    if filter_pushdown:
        spark.conf.set(PUSHDOWN_CONF, "true")
    if lift_arrow_byte_limit and spark.conf.get(ARROW_BYTES_CONF, None) is None:
        spark.conf.set(ARROW_BYTES_CONF, NO_BYTE_LIMIT)
    enabled = str(spark.conf.get(PUSHDOWN_CONF, "false")).lower() == "true"
    spark.dataSource.register(
        TrinityLakeDataSource if enabled else TrinityLakeDataSourceWithoutPushdown
    )


def _hide_secret_options(spark: Any) -> None:
    """Add this source's secret option names to the session's options redaction regex.

    Spark prints the options of a write (``AppendData``, ``OverwriteByExpression``)
    and of ``CREATE TEMPORARY VIEW ... USING`` in its logical plans: in
    ``explain``, in what query execution listeners and logs receive. It hides
    the values of options whose name or value matches
    ``spark.redaction.regex`` or this session setting (``(?i)url`` by
    default); the pattern of :func:`~trinity_dbapi.spark.options.secret_options_pattern`
    is added to what the session has, once.
    """
    from trinity_dbapi.spark.options import OPTIONS_REDACTION_CONF, secret_options_pattern

    ours = secret_options_pattern()
    current = str(spark.conf.get(OPTIONS_REDACTION_CONF) or "")  # unset: Spark's default
    if ours in current:
        return
    spark.conf.set(OPTIONS_REDACTION_CONF, f"{current}|{ours}" if current else ours)


def _activate(spark: Any) -> None:
    """Make ``spark`` the active session of this thread on the JVM side.

    Spark looks Python data sources up in the calling thread's active
    session, which a new Python thread does not have: without this, a
    ``save()`` from another thread fails with DATA_SOURCE_NOT_FOUND.
    """
    jvm = getattr(spark, "_jvm", None)
    session = getattr(spark, "_jsparkSession", None)
    if jvm is not None and session is not None:  # not Spark Connect
        jvm.org.apache.spark.sql.SparkSession.setActiveSession(session)


def register_views(
    spark: Any,
    uri: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
    version: int | None = None,
    catalog: bool = True,
    namespaces: Iterable[str] | None = None,
) -> dict[str, str]:
    """Register each table of the lakehouse as a Spark temporary view ``<namespace>_<table>``.

    Views are frozen: each reads the version pinned when it is created (the
    same ``version`` for all, the latest by default). Call again to see new
    commits.

    Args:
        spark: the SparkSession.
        uri: the lakehouse.
        storage_options: fsspec options (credentials, endpoint).
        version: the lakehouse version all views read; the latest when None.
        catalog: also register ``system_tables``, ``system_columns``, ... .
        namespaces: register the tables of these namespaces only (None: every
            namespace). Only their key ranges are listed (no definition file
            is read here), and the catalog views' rows cover these namespaces
            only (``system_versions`` excepted: it is not per namespace).

    Returns:
        View name -> ``namespace.table``.

    Raises:
        NoSuchNamespaceError: a namespace of ``namespaces`` does not exist in
            the pinned version.
        ProgrammingError: two tables would get the same view name, or
            ``namespaces`` is a string rather than a list of names.
    """
    import dataclasses
    import json

    from trinity_dbapi.errors import ProgrammingError
    from trinity_dbapi.lakehouse.catalog import RESERVED_NAMESPACES, catalog_table_names
    from trinity_dbapi.lakehouse.catalog_scope import namespaces_scope, scoped_tables
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse

    register(spark, filter_pushdown=False)
    pushdown = str(spark.conf.get(PUSHDOWN_CONF, "false")).lower() == "true"
    lakehouse = Lakehouse.open(uri, storage_options=dict(storage_options or {}) or None)
    pinned = lakehouse.latest_version() if version is None else version
    txn = lakehouse.begin(read_only=True, version=pinned)
    scope = namespaces_scope(txn, namespaces)  # NoSuchNamespaceError
    # Names only: each view's read loads its own definition.
    keys_only = dataclasses.replace(scope, definitions=False)
    names = [(namespace, table.name) for namespace, table in scoped_tables(txn, keys_only)]
    if catalog:
        names += [
            (ns, table) for ns in sorted(RESERVED_NAMESPACES) for table in catalog_table_names(ns)
        ]
    views: dict[str, str] = {}
    for namespace, table in names:
        view = f"{namespace}_{table}"
        if view in views:
            raise ProgrammingError(
                f"tables {views[view]} and {namespace}.{table} would both be the view {view!r}; "
                "read one of them with spark.read.format('trinitylake') instead"
            )
        views[view] = f"{namespace}.{table}"
    for view, table in views.items():
        reader = (
            spark.read.format("trinitylake")
            .option("uri", uri)
            .option("versionAsOf", pinned)
            .option("pushFilters", str(pushdown).lower())
        )
        if storage_options:
            reader = reader.option("storageOptions", json.dumps(dict(storage_options)))
        if scope.namespaces is not None and table.split(".")[0] in RESERVED_NAMESPACES:
            reader = reader.option("namespaces", json.dumps(sorted(scope.namespaces)))
        reader.load(table).createOrReplaceTempView(view)
    return views
