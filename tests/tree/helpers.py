"""Helpers shared by the tree tests."""

from __future__ import annotations

from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.tree.btree import TXN_ID_BYTES

NS_MAX, TABLE_MAX, FILE_MAX = 4, 4, 148  # 148: the longest path written
ROW_BYTES = NS_MAX + TABLE_MAX + FILE_MAX + 4


def small_definition(order: int, capacity: int) -> LakehouseDefinition:
    """A lakehouse definition whose node buffers hold exactly ``capacity`` messages."""
    return LakehouseDefinition(
        name="test",
        order=order,
        namespace_name_max_size_bytes=NS_MAX,
        table_name_max_size_bytes=TABLE_MAX,
        file_name_max_size_bytes=FILE_MAX,
        node_file_max_size_bytes=order * ROW_BYTES + capacity * (ROW_BYTES + TXN_ID_BYTES),
    )
