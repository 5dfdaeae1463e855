"""Run in Kartothek 5.3.0's virtualenv: read datasets, print their rows as JSON lines.

    python read_with_kartothek.py <store directory> <dataset uuid> [<predicates JSON>]
    python read_with_kartothek.py --probe <store directory> <dataset uuid> ...

The store is ``hfs://<store directory>`` (storefact), the table ``table``.

The first form prints one JSON object per row of ``read_table``, values by
``rows_json.to_json`` (NaN and NaT as null, naive midnight timestamps as
their date, integral floats as integers, ...), in the column order of the
result. Predicates are Kartothek's disjunctive normal form as JSON; a string
value ``"date:YYYY-MM-DD"`` stands for that ``datetime.date``.

The second form reads each dataset in turn in this one process (a Kartothek
start costs seconds) and prints one JSON line per dataset:
``{"uuid": ..., "dtypes": {column: dtype}, "rows": [...]}`` or, when
``read_table`` raises, ``{"uuid": ..., "error": "<ExceptionType>: <message>"}``.
"""

import datetime
import json
import sys
import warnings

warnings.simplefilter("ignore")

from kartothek.io.eager import read_table
from rows_json import dtypes, frame_rows
from script_exit import exit_without_finalizing
from storefact import get_store_from_url


def _value(value):
    if isinstance(value, str) and value.startswith("date:"):
        return datetime.date.fromisoformat(value[5:])
    return value


def main(directory, dataset_uuid, predicates=None):
    store = get_store_from_url(f"hfs://{directory}")
    if predicates is not None:
        predicates = [[(c, op, _value(v)) for c, op, v in conj] for conj in json.loads(predicates)]
    df = read_table(
        dataset_uuid=dataset_uuid, store=lambda: store, table="table", predicates=predicates
    )
    for row in frame_rows(df):
        print(json.dumps(row))


def probe(directory, *uuids):
    store = get_store_from_url(f"hfs://{directory}")
    for uuid in uuids:
        try:
            df = read_table(dataset_uuid=uuid, store=lambda: store, table="table")
        except Exception as exc:  # noqa: BLE001 (the probe records every failure as it is)
            print(json.dumps({"uuid": uuid, "error": f"{type(exc).__name__}: {exc}"}))
            continue
        print(json.dumps({"uuid": uuid, "dtypes": dtypes(df), "rows": frame_rows(df)}))


if __name__ == "__main__":
    if sys.argv[1] == "--probe":
        probe(*sys.argv[2:])
    else:
        main(*sys.argv[1:])
    exit_without_finalizing()
