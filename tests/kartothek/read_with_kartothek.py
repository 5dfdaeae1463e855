"""Run in Kartothek 5.3.0's virtualenv: read one dataset, print its rows as JSON lines.

    python read_with_kartothek.py <store directory> <dataset uuid> [<predicates JSON>]

The store is ``hfs://<store directory>`` (storefact), the table ``table``.
Predicates are Kartothek's disjunctive normal form as JSON; a string value
``"date:YYYY-MM-DD"`` stands for that ``datetime.date``. Values are printed
as JSON: NaN and NaT as null, timestamps at midnight as their date
(``YYYY-MM-DD``; Kartothek reads DATE columns as datetime64), integral
floats as integers (pandas 1.3 reads an INT column with nulls as float64),
in the column order of the result.
"""

import datetime
import json
import math
import sys
import warnings

warnings.simplefilter("ignore")

import pandas as pd
from kartothek.io.eager import read_table
from storefact import get_store_from_url


def _value(value):
    if isinstance(value, str) and value.startswith("date:"):
        return datetime.date.fromisoformat(value[5:])
    return value


def _json(value):
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        if value.tzinfo is None and value == value.normalize():
            return value.date().isoformat()
        return value.isoformat()
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    return value


def main(directory, dataset_uuid, predicates=None):
    store = get_store_from_url(f"hfs://{directory}")
    if predicates is not None:
        predicates = [[(c, op, _value(v)) for c, op, v in conj] for conj in json.loads(predicates)]
    df = read_table(
        dataset_uuid=dataset_uuid, store=lambda: store, table="table", predicates=predicates
    )
    for row in df.itertuples(index=False):
        print(json.dumps(dict(zip(df.columns, map(_json, row)))))


if __name__ == "__main__":
    main(*sys.argv[1:])
