"""The lakehouse layer: versions, snapshots, transactions, history, maintenance, catalog tables.

The public names are re-exported here (``from trinity_dbapi.lakehouse.lakehouse
import Lakehouse, Snapshot`` keeps working too); modules of the package import
from the module that defines a name.
"""

from trinity_dbapi.lakehouse.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.snapshot import Snapshot

__all__ = ["Lakehouse", "Snapshot"]
