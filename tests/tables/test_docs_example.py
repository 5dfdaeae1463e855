"""The worked example of docs/datasets.md runs as written and makes the files it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"

pytestmark = pytest.mark.filterwarnings("error")


def test_worked_example(tmp_path: Path) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)
    scope: dict[str, object] = {}
    exec(block.replace("/tmp/doc-lake", str(tmp_path / "lake")), scope)  # noqa: S102
    storage, meta, path = scope["storage"], scope["meta"], scope["path"]
    uuid = meta.dataset_uuid  # type: ignore[attr-defined]
    names = [
        re.sub(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[0-9a-f]{32}", "U", f)
        for f in storage.list()
    ]  # type: ignore[attr-defined]
    names = [re.sub(r"/\d{4}-\d\d-\d\dT[^+]*\+", "/TS+", name) for name in names]
    assert names == [
        "U/indices/customer/TS+U.by-dataset-index.parquet",
        "U/metadata/0000000001-U.by-dataset-metadata.json",
        "U/table/_common_metadata",
        "U/table/day=2024-01-01/shop=north%2F1/U.parquet",
        "U/table/day=2024-01-01/shop=s%C3%BCd/U.parquet",
        "U/table/day=__HIVE_DEFAULT_PARTITION__/shop=north%2F1/U.parquet",
    ]
    assert path.startswith(f"{uuid}/metadata/")  # type: ignore[attr-defined]
    from trinity_dbapi import tables

    schema, by = scope["schema"], scope["by"]
    assert tables.read_table(storage, meta, schema, by).num_rows == 3  # type: ignore[arg-type]
    (bob,) = tables.lookup(storage, meta, "customer", ["bob"])  # type: ignore[arg-type]
    assert bob.startswith("day=2024-01-01/shop=s%C3%BCd/")
    pruned = tables.prune(meta, schema, by, {"shop": ["north/1"]})  # type: ignore[arg-type]
    assert [label.split("/")[1] for label in pruned] == ["shop=north%2F1"] * 2
