"""Object definitions: the lakehouse, namespaces, tables and views (``.binpb`` files).

Each definition is a frozen dataclass that validates itself on construction
and converts to and from the protobuf messages of ``proto/trinity.proto``:

* :class:`LakehouseDefinition` -- schema ID 0, the tree's global settings.
* :class:`NamespaceDefinition` -- schema ID 1.
* :class:`TableDefinition` -- schema ID 2, with :class:`Column` and
  :class:`DataType` describing its schema.
* :class:`ViewDefinition` -- schema ID 3: a view's query, columns and the
  objects it names.

Reading (``from_bytes``) applies the format defaults to unset fields and turns
every problem with the file into :class:`~trinity_dbapi.errors.CorruptFileError`
naming the file; constructing an invalid definition in code raises
:class:`~trinity_dbapi.errors.InvalidDefinitionError` naming the field (or
:class:`~trinity_dbapi.errors.InvalidNameError` for an object name).

The package is split by object, each file readable in one sitting:

* ``_common.py`` -- :class:`FrozenMap`, the private field checks
  (``check_int``, ``string_map``, ...), the file error helpers and the
  ``to_bytes`` / ``from_bytes`` base shared by the three definitions.
* ``lakehouse.py`` -- :class:`LakehouseDefinition`, :class:`NamespaceDefinition`
  and the lakehouse defaults (``DEFAULT_ORDER``, ``MIN_ORDER``, ...).
* ``branches.py`` -- :class:`BranchRecord`, a branch in the lakehouse definition.
* ``types.py`` -- :class:`DataType`, :class:`Column`, ``TYPE_KINDS`` and the
  type parameter limits.
* ``table.py`` -- :class:`TableDefinition` (with its partition columns) and ``TABLE_TYPES``.
* ``view.py`` -- :class:`ViewDefinition` and ``TRINITY_DIALECT``.
* ``transaction.py`` -- :class:`TransactionDefinition`, schema ID 4: a saved
  (distributed) transaction, stored under ``_transactions/``, not in the tree.
* ``__init__.py`` (this file) -- :data:`DEFINITION_TYPES` and the re-exports:
  import from ``trinity_dbapi.format.definitions``, not from the submodules.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``_common`` (what every definition shares)
2. ``branches`` (a branch as the lakehouse definition records it), ``types`` (column types),
   ``transaction`` (schema ID 4)
3. ``lakehouse`` (schema IDs 0 and 1), ``table`` (schema ID 2), ``view`` (schema ID 3)
"""

from __future__ import annotations

from collections.abc import Mapping

from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions._common import FrozenMap
from trinity_dbapi.format.definitions.branches import BRANCH_FOLDER_PREFIX, MAIN, BranchRecord
from trinity_dbapi.format.definitions.lakehouse import (
    DEFAULT_FILE_NAME_MAX_SIZE_BYTES,
    DEFAULT_MAXIMUM_VERSION_AGE_MILLIS,
    DEFAULT_MINIMUM_VERSIONS_TO_KEEP,
    DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES,
    DEFAULT_NODE_FILE_MAX_SIZE_BYTES,
    DEFAULT_ORDER,
    DEFAULT_TABLE_NAME_MAX_SIZE_BYTES,
    MIN_ORDER,
    NODE_KEY_ROW_OVERHEAD_BYTES,
    LakehouseDefinition,
    NamespaceDefinition,
)
from trinity_dbapi.format.definitions.table import (
    PARTITION_COLUMNS,
    PARTITION_TRANSFORMS,
    PARTITIONED_BY,
    TABLE_TYPES,
    TableDefinition,
    with_partition_columns,
)
from trinity_dbapi.format.definitions.transaction import TransactionDefinition
from trinity_dbapi.format.definitions.types import (
    MAX_DECIMAL_PRECISION,
    MAX_TIME_PRECISION,
    TYPE_KINDS,
    Column,
    DataType,
)
from trinity_dbapi.format.definitions.view import TRINITY_DIALECT, ViewDefinition

__all__ = [
    "BRANCH_FOLDER_PREFIX",
    "DEFAULT_FILE_NAME_MAX_SIZE_BYTES",
    "DEFAULT_MAXIMUM_VERSION_AGE_MILLIS",
    "DEFAULT_MINIMUM_VERSIONS_TO_KEEP",
    "DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES",
    "DEFAULT_NODE_FILE_MAX_SIZE_BYTES",
    "DEFAULT_ORDER",
    "DEFAULT_TABLE_NAME_MAX_SIZE_BYTES",
    "DEFINITION_TYPES",
    "MAIN",
    "MAX_DECIMAL_PRECISION",
    "MAX_TIME_PRECISION",
    "MIN_ORDER",
    "NODE_KEY_ROW_OVERHEAD_BYTES",
    "PARTITIONED_BY",
    "PARTITION_COLUMNS",
    "PARTITION_TRANSFORMS",
    "TABLE_TYPES",
    "TRINITY_DIALECT",
    "TYPE_KINDS",
    "BranchRecord",
    "Column",
    "DataType",
    "FrozenMap",
    "LakehouseDefinition",
    "NamespaceDefinition",
    "TableDefinition",
    "TransactionDefinition",
    "ViewDefinition",
    "with_partition_columns",
]


#: Definition class of each object schema ID (lakehouse, namespace, table, view).
DEFINITION_TYPES: Mapping[
    int, type[LakehouseDefinition | NamespaceDefinition | TableDefinition | ViewDefinition]
] = FrozenMap(
    {
        keys.LAKEHOUSE_SCHEMA_ID: LakehouseDefinition,
        keys.NAMESPACE_SCHEMA_ID: NamespaceDefinition,
        keys.TABLE_SCHEMA_ID: TableDefinition,
        keys.VIEW_SCHEMA_ID: ViewDefinition,
    }
)
