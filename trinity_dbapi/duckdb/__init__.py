"""The DuckDB bridge: a lakehouse's tables as views in your own DuckDB connection.

:func:`attach` puts one pinned version of a lakehouse into a DuckDB connection
that the caller owns, so ``SELECT * FROM sales.orders`` and any tool that
speaks DuckDB work on it directly (docs/duckdb.md is the manual):

* one DuckDB schema per namespace, named ``prefix + namespace``, holding one
  VIEW per table over exactly the data files of the pinned version, with the
  table's column names and DuckDB types (:func:`~trinity_dbapi.format.type_mapping.duckdb_type`);
* each lakehouse view (``CREATE VIEW``) as a DuckDB view in its namespace's
  schema over the objects of the same version
  (:mod:`~trinity_dbapi.duckdb.lake_views`); one the bridge cannot read
  raises why whenever it is read, and :attr:`Attached.unreadable_views`
  lists them;
* the catalog tables of :mod:`trinity_dbapi.lakehouse.catalog` as small DuckDB
  tables in ``prefix + "trinity_system"`` and ``prefix +
  "trinity_information_schema"``. Not ``system``: a schema of that name makes
  ``system.tables`` ambiguous with DuckDB's own ``system`` catalog, and DuckDB
  refuses the query. They are tables, not views, because a view over Arrow
  data registered from Python only works on the connection that registered
  it, not on its cursors nor in a database file.

How a view reads its table is planned by :mod:`trinity_dbapi.tables.scan`
(:func:`~trinity_dbapi.tables.scan.plan_view_scan`; the trade-off is measured
in docs/duckdb.md):

* **Parquet scan** (the default): ``read_parquet([...the exact files...],
  schema=MAP {field id: {name, type}}, filename=...)``. DuckDB's own reader
  matches payload columns by their Parquet field ID, as
  :func:`~trinity_dbapi.tables.reader.read_table` does (a dropped and re-added
  column does not bring old values back; a column no file has reads as NULL),
  and casts them to the declared types. Partition columns come from the last
  directories of each file's path, decoded in SQL exactly as
  :mod:`~trinity_dbapi.tables.partitions` encodes them
  (:mod:`~trinity_dbapi.tables.partition_sql`, shared with the private DuckDB);
  DuckDB evaluates those expressions per file, so a filter on a partition
  column skips files without opening them. Local
  files are read by path; any other storage (S3, GCS, Azure, memory, ...)
  through the storage itself, as an fsspec file system registered in DuckDB
  under a protocol private to the attachment (``register_filesystem``), so no
  DuckDB extension (httpfs, azure) is downloaded, the storage's credentials
  never reach DuckDB, and the user's own ``s3://``, ``gs://`` or ``az://``
  setup is left alone.
* **Arrow dataset** (the fallback): the lazy dataset of
  :func:`~trinity_dbapi.tables.reader.arrow_dataset` registered under a hidden
  name (``con.register``). Used for the tables the Parquet scan cannot read
  exactly: binary or fixed partition columns (their raw bytes do not
  URL-decode to text) and columns whose IDs do not fit a Parquet field ID.
  Such a view works on ``con`` only, not on its cursors.

``attach(..., namespaces=[...])`` attaches those namespaces only and reads
nothing of the others (their key ranges and definitions stay unread); the
catalog tables' rows then cover those namespaces (``catalog=False`` leaves
them out).

Views are frozen: each one lists the files of the version it was made at.
:meth:`Attached.refresh` re-points them at the newest (or another) version.
Everything is read-only: the views read files that are never changed in place.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``connection`` (what the bridge asks of the user's connection), ``files``
   (how DuckDB reaches the files), ``views`` (the views' SQL)
2. ``lake_views`` (the lakehouse's own views as DuckDB views)
3. ``version_plan`` (what a version needs: tables, catalog tables, views)
4. ``attached`` (``attach``: DuckDB kept in step with the plan)
"""

from __future__ import annotations

from trinity_dbapi.duckdb.attached import Attached, attach
from trinity_dbapi.duckdb.version_plan import CATALOG_SCHEMAS

__all__ = ["CATALOG_SCHEMAS", "Attached", "attach"]
