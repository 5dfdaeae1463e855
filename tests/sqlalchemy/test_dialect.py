"""``trinity_dbapi.sqlalchemy.dialect``: the reflection methods made from ``lookups.FACETS``."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import default

from trinity_dbapi.sqlalchemy import TrinityDialect, lookups

#: Every per-table reflection method SQLAlchemy 2's ``Inspector`` calls on a dialect.
KINDS = (
    "columns",
    "pk_constraint",
    "foreign_keys",
    "indexes",
    "unique_constraints",
    "check_constraints",
    "table_comment",
    "table_options",
)


def test_every_reflection_kind_has_a_facet() -> None:
    assert set(lookups.FACETS) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_the_methods_are_the_dialects_own(kind: str) -> None:
    # Set on the class itself, where SQLAlchemy looks: not DefaultDialect's
    # fallbacks, which would call get_<kind> once per table.
    for name in (f"get_{kind}", f"get_multi_{kind}"):
        method = vars(TrinityDialect)[name]
        assert method.__name__ == name
        assert getattr(TrinityDialect, name) is not getattr(default.DefaultDialect, name, None)
