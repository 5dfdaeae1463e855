"""The lakehouse layer: versions, snapshots, transactions, history, maintenance, catalog tables.

The public names are re-exported here, so ``from trinity_dbapi.lakehouse.lakehouse import
Lakehouse`` keeps working; modules of the package import from the module that
defines a name.
"""

from trinity_dbapi.lakehouse.lakehouse import Lakehouse, Snapshot

__all__ = ["Lakehouse", "Snapshot"]
