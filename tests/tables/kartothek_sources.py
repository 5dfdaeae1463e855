"""Datasets written by Kartothek 5.3 and plateau 4.6 with their own API, for import tests.

Both write the dataset of tests/kartothek/pipeline_frames.py as a pipeline
would: ``store_dataframes_as_dataset`` of two frames (ids 1-4, 5-8) with
``partition_on=["region", "day"]`` and ``secondary_indices=["customer"]``,
then ``update_dataset_from_dataframes`` appending ids 9-12 with
``delete_scope=[{"region": "b"}]``. Both hold ids 2, 3, 5, 6, 8, 9, 10, 11,
12 (``pipeline_frames.EXPECTED_IDS``). The store is the directory given: its
top holds ``<uuid>.by-dataset-metadata.json`` or ``.msgpack.zstd`` (only
the one asked for: both libraries' updates always write JSON, so for
``msgpack`` the updated metadata is re-stored as msgpack with the library's
own ``DatasetMetadataBuilder`` and the JSON file deleted) and the files
under ``<uuid>/``.

* :func:`write_plateau_dataset` runs here (plateau is the test extra) and
  returns plateau's ``read_table`` as a DataFrame: columns
  ``pipeline_frames.TZ_COLUMNS`` (``id, region, day, customer, i, f, s,
  flag, ts, d, tsz``), rows sorted by ``id``, a fresh RangeIndex, the dtypes
  plateau gives (``day`` and ``d`` ``datetime.date`` objects, ``ts``
  ``datetime64[ns]``, ``tsz`` ``datetime64[ns, UTC]``, text ``str``, ``f``
  NaN where missing). ``tsz`` is written as ``datetime64[us, UTC]`` (see
  pipeline_frames.py).
* :func:`write_kartothek_dataset` runs tests/kartothek/write_with_kartothek.py
  with the Kartothek virtualenv's Python (made and cached by
  tests/kartothek/venv.py; ``venv.KartothekUnavailable`` means skip) and
  returns its rows: dicts in ``pipeline_frames.COLUMNS`` order (no ``tsz``),
  sorted by ``id``, values by ``rows_json.to_json``.

``tests.kartothek.rows_json.frame_rows`` turns the plateau frame into the
same kind of dicts, so both compare with a SELECT normalised by ``to_json``.
:func:`our_rows` is our reader's (``trinity_dbapi.tables.kartothek``) rows
of such a store, the same kind of dicts; :data:`ROW_2` is row id 2.
"""

from __future__ import annotations

import json
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

from tests.kartothek import pipeline_frames, venv
from tests.kartothek.rows_json import frame_rows
from trinity_dbapi.storage.local import LocalStorage
from trinity_dbapi.tables import kartothek

WRITER = Path(__file__).resolve().parents[1] / "kartothek" / "write_with_kartothek.py"

#: The time-zone-aware column's dtype in the plateau dataset (see pipeline_frames.py).
TZ_DTYPE = "datetime64[us, UTC]"


def write_plateau_dataset(store_dir: Path | str, uuid: str, metadata_format: str = "json") -> Any:
    """Write and update the dataset with plateau; return plateau's ``read_table`` of it.

    Args:
        store_dir: the store's directory (created if missing).
        uuid: the dataset UUID.
        metadata_format: ``json`` or ``msgpack``, the only main metadata file left.

    Returns:
        A pandas DataFrame (columns, order and dtypes in the module docstring).
    """
    import minimalkv
    from plateau.core.dataset import DatasetMetadata, DatasetMetadataBuilder
    from plateau.io import eager

    store = partial(minimalkv.get_store_from_url, f"hfs://{store_dir}")
    eager.store_dataframes_as_dataset(
        store=store,
        dataset_uuid=uuid,
        dfs=[pipeline_frames.frame(ids, TZ_DTYPE) for ids in pipeline_frames.FIRST_WRITE],
        partition_on=pipeline_frames.PARTITION_ON,
        secondary_indices=pipeline_frames.INDEXED,
        metadata_storage_format=metadata_format,
    )
    eager.update_dataset_from_dataframes(
        [pipeline_frames.frame(pipeline_frames.UPDATE, TZ_DTYPE)],
        store=store,
        dataset_uuid=uuid,
        partition_on=pipeline_frames.PARTITION_ON,
        secondary_indices=pipeline_frames.INDEXED,
        delete_scope=pipeline_frames.DELETE_SCOPE,
    )
    if metadata_format == "msgpack":
        kv = store()
        dataset = DatasetMetadata.load_from_store(uuid, kv)
        kv.put(*DatasetMetadataBuilder.from_dataset(dataset).to_msgpack())
        kv.delete(f"{uuid}.by-dataset-metadata.json")
    frame = eager.read_table(uuid, store)
    return frame[pipeline_frames.TZ_COLUMNS].sort_values("id").reset_index(drop=True)


def write_kartothek_dataset(
    store_dir: Path | str, uuid: str, metadata_format: str = "json"
) -> list[dict[str, Any]]:
    """Write and update the dataset with Kartothek 5.3; return Kartothek's rows of it.

    Raises:
        venv.KartothekUnavailable: no Python 3.9.18 for Kartothek's virtualenv (skip).
        AssertionError: the writer failed (its stderr in the message).
    """
    python = venv.ensure_venv()
    args = [str(python), str(WRITER), str(store_dir), uuid, metadata_format]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def our_rows(store: Path, uuid: str, columns: list[str]) -> list[dict[str, object]]:
    """Our reader's rows of the dataset, as ``rows_json`` dicts in ``columns`` order, by id."""
    storage = LocalStorage(store.as_uri())
    frame = kartothek.read_rows(storage, kartothek.open_dataset(storage, uuid)).to_pandas()
    return sorted(frame_rows(frame[columns]), key=lambda r: r["id"])


#: Row 2 as both libraries read it back (``rows_json`` values; plateau's also has ``tsz``).
ROW_2 = {
    "id": 2,
    "region": "süd",
    "day": "2024-01-01",
    "customer": "cy",
    "i": 20,
    "f": 3,
    "s": "s2",
    "flag": True,
    "ts": "2024-01-01T12:30:00",
    "d": "2023-12-02",
}


# -- the per-type probe of what we read ---------------------------------------------

#: What our reader gives for each dataset of ``pipeline_frames.type_frames`` written
#: by either library: the ``k`` values of ids 1, 2 (``rows_json``), or for ``wide``
#: its row 1 (row 2 is all None). The ``null_*`` frames are never written.
WE_READ: dict[str, Any] = {
    "int16": [1, -2],  # Arrow int64: both libraries store partition integers as int64
    "int32": [100000, -3],
    "int64": [1099511627776, -1],
    "float32": [1.5, -0.25],  # Arrow double
    "float64": [2.5, 0.001],
    "decimal": ["1.50", "-2.25"],  # decimal128(3, 2) from _common_metadata
    "string": ["a b", "süd"],
    "bool": [True, False],
    "date": ["2024-01-01", "2024-02-29"],
    "datetime": ["2024-01-01T10:30:00", "2024-01-02T00:00:00.123456"],
    "wide": {"dec": "1.25", "byt": "0x0102", "tim": "10:30:00.123456", "lst": [1.5, 2.5]},
}

#: Why neither library writes a NULL partition value (the start of the error).
NULL_PARTITION_ERROR = "ValueError: Original dataframe size (2 rows) does not match new"


def write_plateau_type_datasets(store_dir: Path | str) -> dict[str, str | None]:
    """Write ``pipeline_frames.type_frames`` with plateau; name -> None or the error."""
    import minimalkv
    from plateau.io.eager import store_dataframes_as_dataset

    store = partial(minimalkv.get_store_from_url, f"hfs://{store_dir}")
    return pipeline_frames.write_type_datasets(store, store_dataframes_as_dataset)  # type: ignore[no-any-return]


def write_kartothek_type_datasets(store_dir: Path | str) -> dict[str, str | None]:
    """Write ``pipeline_frames.type_frames`` with Kartothek 5.3 (one process); name -> None or the error."""
    args = [str(venv.ensure_venv()), str(WRITER), "--types", str(store_dir)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def we_read_type_datasets(store_dir: Path, outcome: dict[str, str | None]) -> dict[str, Any]:
    """Our reader's view of the written per-type datasets, in the form of :data:`WE_READ`."""
    got: dict[str, Any] = {}
    for name, error in outcome.items():
        if error is not None:
            continue
        rows = our_rows(store_dir, name, ["id", "k"] if name != "wide" else ["id", *WE_READ[name]])
        if name == "wide":
            assert {k: v for k, v in rows[1].items() if k != "id"} == dict.fromkeys(WE_READ[name])
            got[name] = {k: v for k, v in rows[0].items() if k != "id"}
        else:
            got[name] = [r["k"] for r in rows]
    return got
