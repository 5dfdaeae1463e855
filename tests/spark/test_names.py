"""A Spark write that creates a table holds its names to the rule for new names (issue 29).

The DataFrame's column names and the table name become stored names: the
same rule as every other write path (docs/format.md, Object names), checked
before any task writes a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException

from tests.spark.helpers import Lake, files_on_disk

NFC = "caf\u00e9"
NFD = "cafe\u0301"


@pytest.mark.parametrize(
    ("column", "refused"),
    [
        (NFC, None),
        ("a b", None),
        (NFD, "not in Unicode normalization form NFC"),
        ("a\u200bb", "U+200B ZERO WIDTH SPACE at position 1 renders as nothing"),
        ("a\u202eb", "U+202E RIGHT-TO-LEFT OVERRIDE at position 1 is a bidirectional control"),
        ("a\tb", "U+0009 at position 1 is a control character"),
    ],
)
def test_create_table_refuses_a_column_name_the_rule_refuses(
    lake: Lake, column: str, refused: str | None
) -> None:
    frame = lake.spark.createDataFrame([(1, "x")], ["id", column])
    before = files_on_disk(lake.root or Path(lake.uri))
    version = lake.version()
    if refused is None:
        lake.save(frame, "fresh.t", options={"createTable": "true"})
        assert lake.rows(f'SELECT id, "{column}" FROM fresh.t') == [(1, "x")]
        return
    with pytest.raises(AnalysisException) as info:
        lake.save(frame, "fresh.t", options={"createTable": "true"})
    message = str(info.value)
    assert "InvalidNameError" in message and refused in message
    assert ascii(column) in message and "of table fresh.t" in message
    assert lake.version() == version  # nothing committed
    assert files_on_disk(lake.root or Path(lake.uri)) == before  # and no file written


def test_create_table_refuses_a_table_name_the_rule_refuses(lake: Lake) -> None:
    frame = lake.spark.createDataFrame([(1,)], ["id"])
    with pytest.raises(AnalysisException, match="U\\+200B ZERO WIDTH SPACE"):
        lake.save(frame, "s.t\u200b", options={"createTable": "true"})
    assert lake.rows("SHOW TABLES IN s") == []
