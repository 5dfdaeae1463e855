"""The demo's sample data: a web shop's customers and a year of its orders.

Generated with NumPy from a fixed seed, so every run (and every test) sees
the same rows, with nothing downloaded. The shapes are those of real shop
data: most customers order a little and a few order a lot, amounts are
skewed to small baskets, and order numbers grow with time, so a point query
on ``order_id`` touches one month.

Imports from demo/: nothing.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa

#: The seed of every generated column.
SEED = 20251
#: The year the orders are placed in, one partition per month.
YEAR = 2025

FIRST_NAMES = [
    "Ada",
    "Alan",
    "Ana",
    "Ben",
    "Carla",
    "Chen",
    "Dana",
    "Emil",
    "Eva",
    "Femi",
    "Grace",
    "Hana",
    "Ivan",
    "Jonas",
    "Kai",
    "Lea",
    "Lina",
    "Maya",
    "Noah",
    "Omar",
    "Priya",
    "Rosa",
    "Sami",
    "Tom",
    "Uma",
    "Yuki",
]
LAST_NAMES = [
    "Berg",
    "Costa",
    "Diaz",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ito",
    "Jansen",
    "Kowalski",
    "Larsen",
    "Moreau",
    "Nakamura",
    "Okafor",
    "Patel",
    "Rossi",
    "Schmidt",
    "Silva",
    "Tanaka",
    "Weber",
]
#: Countries and the share of customers from each.
COUNTRIES = {
    "DE": 0.22,
    "US": 0.18,
    "FR": 0.12,
    "GB": 0.11,
    "NL": 0.08,
    "SE": 0.07,
    "JP": 0.07,
    "BR": 0.06,
    "CA": 0.05,
    "AU": 0.04,
}
SEGMENTS = {"consumer": 0.72, "business": 0.23, "enterprise": 0.05}
#: Order states and their shares.
STATUSES = {"delivered": 0.85, "shipped": 0.06, "cancelled": 0.05, "returned": 0.04}


def _choice(rng: np.random.Generator, shares: dict[str, float], size: int) -> pa.Array:
    names = list(shares)
    picks = rng.choice(len(names), size=size, p=np.array(list(shares.values())))
    return pa.DictionaryArray.from_arrays(pa.array(picks, pa.int32()), names).cast(pa.string())


def customers(count: int) -> pa.Table:
    """``count`` customers, ids 1..count: name, country, segment, sign-up day."""
    rng = np.random.default_rng(SEED)
    first = np.array(FIRST_NAMES)[rng.integers(0, len(FIRST_NAMES), count)]
    last = np.array(LAST_NAMES)[rng.integers(0, len(LAST_NAMES), count)]
    start = dt.date(YEAR - 3, 1, 1)
    days = rng.integers(0, (dt.date(YEAR, 1, 1) - start).days, count)
    return pa.table(
        {
            "customer_id": pa.array(np.arange(1, count + 1), pa.int64()),
            "name": pa.array(np.char.add(np.char.add(first, " "), last)),
            "country": _choice(rng, COUNTRIES, count),
            "segment": _choice(rng, SEGMENTS, count),
            "signed_up": pa.array(np.datetime64(start, "D") + days, pa.date32()),
        }
    )


def orders(count: int, customer_count: int) -> pa.Table:
    """``count`` orders placed in :data:`YEAR`, numbered 1..count in time order.

    Columns: order_id, order_month (the first day of the order's month: the
    partition), ordered_at (UTC, milliseconds), customer_id (a few customers
    place many orders), status, amount (two decimals, skewed to small baskets).
    """
    rng = np.random.default_rng(SEED + 1)
    start = np.datetime64(f"{YEAR}-01-01T00:00:00", "ms")
    span = int((np.datetime64(f"{YEAR + 1}-01-01T00:00:00", "ms") - start).astype(np.int64))
    ordered_at = start + np.sort(rng.integers(0, span, count)).astype("timedelta64[ms]")
    months = ordered_at.astype("datetime64[M]").astype("datetime64[D]")
    # Customer activity follows a power law: a few customers place most orders.
    ranks = np.minimum(rng.pareto(1.2, count) * customer_count / 40, customer_count - 1)
    customer = rng.permutation(customer_count)[ranks.astype(np.int64)] + 1
    cents = np.round(rng.lognormal(3.6, 0.75, count) * 100).astype(np.int64) + 99
    return pa.table(
        {
            "order_id": pa.array(np.arange(1, count + 1), pa.int64()),
            "order_month": pa.array(months, pa.date32()),
            "ordered_at": pa.array(ordered_at, pa.timestamp("ms", tz="UTC")),
            "customer_id": pa.array(customer, pa.int64()),
            "status": _choice(rng, STATUSES, count),
            "amount": _decimal(cents, scale=2),
        }
    )


def _decimal(unscaled: np.ndarray, scale: int) -> pa.Array:
    """DECIMAL(12, scale) values from their unscaled integers (cents for scale 2), exactly.

    A decimal128 value is its unscaled integer as 16 little-endian bytes;
    building them directly avoids both float rounding and a text detour.
    """
    words = np.zeros((len(unscaled), 2), dtype="<i8")
    words[:, 0] = unscaled
    words[:, 1] = np.where(unscaled < 0, -1, 0)  # the sign extension of the high word
    return pa.Array.from_buffers(
        pa.decimal128(12, scale), len(unscaled), [None, pa.py_buffer(words)]
    )
