"""Rows of a pandas DataFrame as JSON values, the same under Kartothek's and our environment.

Imported by the scripts run with the Kartothek virtualenv's Python 3.9
(pandas 1.3, found beside them on ``sys.path``) and, as
``tests.kartothek.rows_json``, by the tests in the main environment (pandas
3), so it uses nothing newer than Python 3.9 and only pandas API both have.

:func:`to_json` of one value:

* ``None``, NaN, NaT, ``pd.NA`` -> ``None``;
* a naive timestamp at midnight -> its date ``"YYYY-MM-DD"`` (Kartothek reads
  DATE columns as ``datetime64``, plateau as ``datetime.date``); any other
  timestamp, date, time -> ``isoformat()`` (aware ones keep their offset,
  ``+00:00``);
* a float with an integral value -> that ``int`` (pandas reads an INT column
  with nulls as ``float64``); other floats as they are;
* ``Decimal`` -> its text (``"1.50"``); ``bytes`` -> ``"0x"`` and hex digits;
* NumPy scalars -> the Python value; arrays, lists and tuples -> lists and
  dicts -> dicts, element by element.
"""

import datetime
import decimal
import math

import numpy as np
import pandas as pd


def to_json(value):
    """One cell as a JSON value (rules in the module docstring)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if value is None or value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, np.generic):
        if isinstance(value, np.floating) and np.isnan(value):
            return None
        if isinstance(value, (np.datetime64, np.timedelta64)):
            return to_json(pd.Timestamp(value)) if not pd.isna(value) else None
        value = value.item()
    if isinstance(value, pd.Timestamp):
        if value.tzinfo is None and value == value.normalize():
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        if (
            isinstance(value, datetime.datetime)
            and value.tzinfo is None
            and value.time() == datetime.time()
        ):
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    return value


def frame_rows(df):
    """The rows of ``df`` as dicts of column name to :func:`to_json` value, in column order."""
    names = [str(c) for c in df.columns]
    return [dict(zip(names, map(to_json, row))) for row in df.itertuples(index=False)]


def dtypes(df):
    """``{column: str(dtype)}`` of ``df``."""
    return {str(c): str(t) for c, t in df.dtypes.items()}
