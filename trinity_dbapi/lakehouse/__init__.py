"""The lakehouse layer: versions, snapshots, transactions, history, upkeep, catalog tables.

The public names are re-exported here (``from trinity_dbapi.lakehouse.lakehouse
import Lakehouse, Snapshot`` keeps working too); modules of the package import
from the module that defines a name.

Floors, bottom to top: a module imports only modules on floors below its
own, in any form (at the top, inside a function, for type checking); each
module's docstring ends with the ones it imports, and
``tests/test_folders.py`` holds both to the imports. The seam
is floor 3: :class:`~trinity_dbapi.lakehouse.chain.VersionChain` (storage,
definition, node store; loading versions and committing the next) and its
:class:`~trinity_dbapi.lakehouse.chain.Snapshot`. Every module above types
against the chain; :class:`~trinity_dbapi.lakehouse.lakehouse.Lakehouse`, the
chain as people open it, is the top.

1. ``roots`` (finding root files), ``io_pool``, ``definition_cache``,
   ``table_formats`` (the formats' registry), ``catalog_columns``
2. ``commit_point`` (the root's create, by version number), ``expired``
   (expiry told from damage), ``ownership``
3. ``chain`` (the version chain and its snapshots)
4. ``read_ahead``, ``recovery``, ``derived``, ``objects``, ``catalog_files``,
   ``saved_transactions`` (saved transactions' records and what they keep)
5. ``opening``, ``history``, ``views``
6. ``transaction``, ``expiration``, ``catalog_scope``
7. ``blind_commits`` (rollback, compaction), ``export``, ``garbage``,
   ``catalog_views``, ``handoff`` (SAVE and LOAD TRANSACTION), ``branches``
   (branches and tags, in main's definition)
8. ``maintenance`` (the door to upkeep: ``lakehouse.maintenance``),
   ``merging`` (MERGE BRANCH: three-way, data-aware, one commit),
   ``catalog`` (the ``system`` and ``information_schema`` tables)
9. ``lakehouse`` (the facade: create, open, time travel, transactions)
"""

from trinity_dbapi.lakehouse.chain import Snapshot
from trinity_dbapi.lakehouse.lakehouse import Lakehouse

__all__ = ["Lakehouse", "Snapshot"]
