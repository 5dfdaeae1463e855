"""The README's Spark example runs on the session's Spark and prints what the README says."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from tests.test_readme import make_demo_lakehouse, tour_examples

pytest.importorskip("pyspark")


def test_readme_spark_example(spark: Any, tmp_path: Path) -> None:
    ((code, printed),) = [
        (code, printed) for section, _, code, printed in tour_examples() if section == "Spark"
    ]
    make_demo_lakehouse(tmp_path)
    # Spark's workers resolve a relative uri against the JVM's working
    # directory (where this session's Spark started), not the test's.
    code = code.replace('"demo-lakehouse"', repr(str(tmp_path / "demo-lakehouse")))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(code, {})  # noqa: S102  (getOrCreate returns the session's Spark)
    assert buffer.getvalue() == printed
    import trinity_dbapi

    with trinity_dbapi.connect(str(tmp_path / "demo-lakehouse"), read_only=True) as conn:
        returned = conn.execute(
            "SELECT count(*) FROM shop.orders WHERE status = 'returned'"
        ).fetchone()
        assert conn.execute("SELECT count(*) FROM shop.returns").fetchone() == returned
