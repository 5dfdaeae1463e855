"""Fixtures of the SQLAlchemy dialect tests: engines on fresh lakehouses.

Fixtures:
    engine: an engine on a fresh local lakehouse holding an empty namespace ``ns``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.schema import CreateSchema

#: The namespace (SQLAlchemy schema) the tests create their tables in.
NS = "ns"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[sa.Engine]:
    """An engine on a fresh lakehouse under ``tmp_path`` with an empty namespace ``ns``."""
    created = sa.create_engine(f"trinity:///{tmp_path / 'lake'}")
    with created.begin() as conn:
        conn.execute(CreateSchema(NS))
    try:
        yield created
    finally:
        created.dispose()
