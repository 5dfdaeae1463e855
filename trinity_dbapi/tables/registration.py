"""The ``kartothek`` table format's hooks in the lakehouse layer, registered in one place.

The lakehouse layer never names tables/ (it sits below it): what it must
know of a managed table it asks the hooks the table's format registered in
:mod:`trinity_dbapi.lakehouse.table_formats`. :func:`register` registers
all of them for :data:`~trinity_dbapi.tables.managed.TABLE_FORMAT`:

* **referenced files** (:func:`~trinity_dbapi.tables.file_rules.referenced_files`):
  every file a version of a table uses, which garbage collection keeps
  while the version is retained;
* **file rules** (:mod:`~trinity_dbapi.tables.file_rules`, with
  :func:`~trinity_dbapi.tables.managed.read_from`): which files under the
  root are a managed table's, so garbage collection deletes our orphans and
  never another program's files; and how a definition another lakehouse
  holds (a minimal or partial export) reaches its files there;
* **derived files** (:mod:`~trinity_dbapi.tables.kartothek_main`):
  Kartothek's main metadata file, rewritten after each commit;
* **data files** (:func:`~trinity_dbapi.tables.data_files.describe_files`):
  the rows of ``system.data_files``;
* **table merge** (:func:`~trinity_dbapi.tables.merging.merge_tables`): the
  three-way, file-by-file merge of a table both sides of ``MERGE BRANCH``
  changed.

They are registered together: the lakehouse loads a format's entry point
only when it knows none of its hooks, so one missing would go unnoticed
(garbage collection taking our files for another program's, no derived
file, no rows).

Importing this module registers them, and that happens before any
lakehouse operation needs them:

* the ``trinity_dbapi.table_formats`` entry point (setup.cfg) names this
  module's :func:`referenced_files`: a process that only opens a
  ``Lakehouse`` (garbage collection in a fresh process) loads it on the
  lakehouse's first need;
* the SQL engine's front door (``sql/engine/dispatch.py``), Spark's writer
  and the DuckDB bridge import it, so their processes register before
  their first statement even without the package's installed metadata.

Imports from tables/: data_files, file_rules, kartothek_main, managed, merging.
"""

from __future__ import annotations

from trinity_dbapi.lakehouse.table_formats import (
    FileRules,
    register_data_files,
    register_derived_files,
    register_file_rules,
    register_table_format,
    register_table_merge,
)
from trinity_dbapi.tables import data_files, file_rules, kartothek_main, managed, merging
from trinity_dbapi.tables.file_rules import referenced_files

__all__ = ["referenced_files", "register"]


def register() -> None:
    """Register the managed table format's hooks with the lakehouse layer (again: no change)."""
    name = managed.TABLE_FORMAT
    register_table_format(name, referenced_files)
    register_file_rules(
        name,
        FileRules(
            group_of=file_rules.group_of,
            ownership=file_rules.ownership,
            read_from=managed.read_from,
        ),
    )
    register_derived_files(name, kartothek_main.publish, kartothek_main.published_files)
    register_data_files(name, data_files.describe_files)
    register_table_merge(name, merging.merge_tables)


register()
