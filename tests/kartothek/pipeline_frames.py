"""The frames the Kartothek and plateau writers write, the same in both environments.

Imported by tests/kartothek/write_with_kartothek.py (Kartothek's Python 3.9,
pandas 1.3) and tests/tables/kartothek_sources.py (plateau, pandas 3), so
nothing newer than Python 3.9 and only pandas API both have.

:func:`frame` of some ids; written as two frames (:data:`FIRST_WRITE`)
partitioned on :data:`PARTITION_ON` with the secondary index
:data:`INDEXED`, then updated with :data:`UPDATE` and :data:`DELETE_SCOPE`,
which drops the first write's rows of region ``b`` (ids 1, 4, 7) and keeps
the update's own (id 10): the dataset holds :data:`EXPECTED_IDS`.

Columns, in :data:`COLUMNS` order: ``id`` int64; ``region`` text partition
(``b`` for ids 1, 4, 7, 10, ``süd`` for 2, 5, 8, 11 -- directory
``region=s%C3%BCd`` --, ``a`` for 3, 6, 9, 12); ``day`` ``datetime.date``
partition (2024-01-01 for even ids, 2024-01-02 for odd); ``customer`` text,
indexed (``ann``, ``bob``, ``cy``, ``dee`` by id modulo 4); ``i`` int64, id
times 10; ``f`` float64, id times 1.5, NaN for ids divisible by 4; ``s`` text
``s<id>``, None for ids divisible by 3; ``flag`` bool, id even; ``ts``
datetime64[ns], 2024-01-01 10:30 plus id hours; ``d`` ``datetime.date``,
2023-12-<id>. With ``tz_dtype`` also ``tsz``, ``ts`` localised to UTC as
that dtype (:data:`TZ_COLUMNS` order). Neither Kartothek 5.3 nor plateau
4.6.2 can update a dataset with a ``datetime64[ns, UTC]`` column: the
``_common_metadata`` they wrote reads back as ``timestamp[us, tz=UTC]`` and
the update fails ("Schemas for table 'table' of dataset ... are not
compatible"). So the plateau writer passes ``datetime64[us, UTC]`` (pandas 2
and later), and Kartothek's dataset (pandas 1.3, nanoseconds only) has no
``tsz``.

No slash in a partition value: Kartothek 5.3 and plateau 4.6.2 leave ``/``
unencoded in the directory name and read ``x/y`` back as ``x``.
"""

import datetime
import decimal

import numpy as np
import pandas as pd

COLUMNS = ["id", "region", "day", "customer", "i", "f", "s", "flag", "ts", "d"]
TZ_COLUMNS = [*COLUMNS, "tsz"]
PARTITION_ON = ["region", "day"]
INDEXED = ["customer"]
FIRST_WRITE = [range(1, 5), range(5, 9)]
UPDATE = range(9, 13)
DELETE_SCOPE = [{"region": "b"}]
EXPECTED_IDS = [2, 3, 5, 6, 8, 9, 10, 11, 12]


def frame(ids, tz_dtype=None):
    """The rows of ``ids`` (see the module docstring)."""
    ids = list(ids)
    base = pd.Timestamp("2024-01-01 10:30:00")
    ts = pd.Series([base + pd.Timedelta(hours=i) for i in ids], dtype="datetime64[ns]")
    columns = {
        "id": np.array(ids, dtype="int64"),
        "region": [("a", "b", "süd")[i % 3] for i in ids],
        "day": [datetime.date(2024, 1, 1 + i % 2) for i in ids],
        "customer": [("ann", "bob", "cy", "dee")[i % 4] for i in ids],
        "i": np.array([i * 10 for i in ids], dtype="int64"),
        "f": np.array([np.nan if i % 4 == 0 else i * 1.5 for i in ids], dtype="float64"),
        "s": [None if i % 3 == 0 else f"s{i}" for i in ids],
        "flag": np.array([i % 2 == 0 for i in ids], dtype="bool"),
        "ts": ts,
        "d": [datetime.date(2023, 12, i) for i in ids],
    }
    if tz_dtype is not None:
        columns["tsz"] = ts.dt.tz_localize("UTC").astype(tz_dtype)
    return pd.DataFrame(columns, columns=COLUMNS if tz_dtype is None else TZ_COLUMNS)


def type_frames():
    """One frame per partition column dtype for the per-type probe: name -> frame.

    Each has ``id`` 1, 2, the partition column ``k`` and ``v`` 10, 20; the
    ``null_*`` ones hold None/NaN for id 2 (neither library writes those:
    ``partition_on`` drops the row and the write fails). ``wide`` is not
    partitioned: ``id`` and a column per further dtype (``dec`` Decimal,
    ``byt`` bytes, ``tim`` ``datetime.time``, ``lst`` a list of floats),
    None for id 2.
    """
    cases = {
        "int16": pd.Series([1, -2], dtype="int16"),
        "int32": pd.Series([100000, -3], dtype="int32"),
        "int64": pd.Series([2**40, -1], dtype="int64"),
        "float32": pd.Series([1.5, -0.25], dtype="float32"),
        "float64": pd.Series([2.5, 0.001], dtype="float64"),
        "decimal": pd.Series([decimal.Decimal("1.50"), decimal.Decimal("-2.25")], dtype=object),
        "string": pd.Series(["a b", "süd"], dtype=object),
        "bool": pd.Series([True, False], dtype="bool"),
        "date": pd.Series([datetime.date(2024, 1, 1), datetime.date(2024, 2, 29)], dtype=object),
        "datetime": pd.Series(
            [pd.Timestamp("2024-01-01 10:30"), pd.Timestamp("2024-01-02 00:00:00.123456")],
            dtype="datetime64[ns]",
        ),
        "null_string": pd.Series(["a", None], dtype=object),
        "null_float": pd.Series([1.5, np.nan], dtype="float64"),
    }
    ids = np.array([1, 2], dtype="int64")
    frames = {
        name: pd.DataFrame({"id": ids, "k": k, "v": np.array([10, 20], dtype="int64")})
        for name, k in cases.items()
    }
    frames["wide"] = pd.DataFrame(
        {
            "id": ids,
            "dec": pd.Series([decimal.Decimal("1.25"), None], dtype=object),
            "byt": pd.Series([b"\x01\x02", None], dtype=object),
            "tim": pd.Series([datetime.time(10, 30, 0, 123456), None], dtype=object),
            "lst": pd.Series([[1.5, 2.5], None], dtype=object),
        }
    )
    return frames


def write_type_datasets(store_factory, store_dataframes_as_dataset):
    """Write :func:`type_frames` (each as the dataset of its name); name -> ``None`` or error text.

    ``store_dataframes_as_dataset`` is Kartothek's or plateau's function.
    """
    outcome = {}
    for name, df in type_frames().items():
        try:
            store_dataframes_as_dataset(
                store=store_factory,
                dataset_uuid=name,
                dfs=[df],
                partition_on=None if name == "wide" else ["k"],
            )
        except ValueError as exc:
            outcome[name] = f"{type(exc).__name__}: {exc}"
        else:
            outcome[name] = None
    return outcome
