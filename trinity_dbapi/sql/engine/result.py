"""What a statement returns: :class:`Result`.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class Result:
    """What a statement returns: rows (or None when it has no result set) and a row count.

    Rows are a whole ``pa.Table`` or a ``pa.RecordBatchReader`` streaming
    them (then the row count is -1: unknown until read).
    """

    table: pa.Table | pa.RecordBatchReader | None = None
    rowcount: int = -1
