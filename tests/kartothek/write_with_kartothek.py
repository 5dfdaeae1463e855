"""Run in Kartothek 5.3.0's virtualenv: write and update a dataset with Kartothek's API, print it.

    python write_with_kartothek.py <store directory> <dataset uuid> <msgpack|json>
    python write_with_kartothek.py --types <store directory>

The store is ``hfs://<store directory>`` (storefact; the directory is
created). The dataset is the one of pipeline_frames.py, written as a
pipeline would: ``store_dataframes_as_dataset`` of two frames (ids 1-4 and
5-8) with ``partition_on=["region", "day"]``, ``secondary_indices=["customer"]``
and ``metadata_storage_format`` from the third argument, then
``update_dataset_from_dataframes`` appending a frame (ids 9-12) with
``delete_scope=[{"region": "b"}]``. It holds ids 2, 3, 5, 6, 8, 9, 10, 11, 12
(``pipeline_frames.EXPECTED_IDS``) in the columns ``pipeline_frames.COLUMNS``
(no time-zone-aware column: see pipeline_frames.py).

Kartothek 5.3's update always stores its metadata as JSON. With ``msgpack``
the script then re-stores the updated metadata with Kartothek's own
``DatasetMetadataBuilder.from_dataset(...).to_msgpack()`` and deletes the
JSON file, so the store's top holds only ``<uuid>.by-dataset-metadata.msgpack.zstd``
(without that, the first write's msgpack file stays beside a newer JSON one,
which readers take first). With ``json`` it holds only the ``.json`` file.

Prints Kartothek's own ``read_table`` of the result, one JSON object per row
on stdout, rows sorted by ``id``, keys in ``pipeline_frames.COLUMNS`` order
(``id, region, day, customer, i, f, s, flag, ts, d``), values by
``rows_json.to_json``: NaN and None as null; ``day`` and ``d`` (read as
datetime64 at midnight) as ``"YYYY-MM-DD"``; ``ts`` as
``"YYYY-MM-DDTHH:MM:SS"``; integral floats as integers (``f`` of id 2 is
``3``). Nothing else is printed (warnings are silenced).

The second form writes the per-type datasets of
``pipeline_frames.type_frames`` (one dataset per name, JSON metadata) and
prints one JSON object: name -> ``null`` (written) or the error text.
"""

import json
import sys
import warnings

warnings.simplefilter("ignore")

from kartothek.core.dataset import DatasetMetadata, DatasetMetadataBuilder
from kartothek.io.eager import (
    read_table,
    store_dataframes_as_dataset,
    update_dataset_from_dataframes,
)
from pipeline_frames import (
    COLUMNS,
    DELETE_SCOPE,
    FIRST_WRITE,
    INDEXED,
    PARTITION_ON,
    UPDATE,
    frame,
    write_type_datasets,
)
from rows_json import frame_rows
from script_exit import exit_without_finalizing
from storefact import get_store_from_url


def main(directory, dataset_uuid, storage_format):
    if storage_format not in ("json", "msgpack"):
        raise SystemExit(f"the metadata format is json or msgpack, not {storage_format!r}")
    store = get_store_from_url(f"hfs://{directory}")
    store_dataframes_as_dataset(
        store=lambda: store,
        dataset_uuid=dataset_uuid,
        dfs=[frame(ids) for ids in FIRST_WRITE],
        partition_on=PARTITION_ON,
        secondary_indices=INDEXED,
        metadata_storage_format=storage_format,
    )
    update_dataset_from_dataframes(
        [frame(UPDATE)],
        store=lambda: store,
        dataset_uuid=dataset_uuid,
        partition_on=PARTITION_ON,
        secondary_indices=INDEXED,
        delete_scope=DELETE_SCOPE,
    )
    if storage_format == "msgpack":
        dataset = DatasetMetadata.load_from_store(dataset_uuid, store)
        store.put(*DatasetMetadataBuilder.from_dataset(dataset).to_msgpack())
        store.delete(f"{dataset_uuid}.by-dataset-metadata.json")
    df = read_table(dataset_uuid=dataset_uuid, store=lambda: store, table="table")
    df = df[COLUMNS].sort_values("id").reset_index(drop=True)
    for row in frame_rows(df):
        print(json.dumps(row))


if __name__ == "__main__":
    if sys.argv[1] == "--types":
        store = get_store_from_url(f"hfs://{sys.argv[2]}")
        print(json.dumps(write_type_datasets(lambda: store, store_dataframes_as_dataset)))
    else:
        main(*sys.argv[1:])
    exit_without_finalizing()
