"""Views as lakehouse objects: a transaction creates, lists, loads, replaces and drops them.

Views and tables share one set of names per namespace, also between
concurrent transactions; views are versioned like every object.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.lakehouse.helpers import table_def
from trinity_dbapi.errors import (
    CommitConflictError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    ObjectExistsError,
)
from trinity_dbapi.format.definitions import TRINITY_DIALECT, Column, DataType, ViewDefinition
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.views import NoSuchViewError


def view_def(name: str, sql: str = "SELECT a FROM ns.t") -> ViewDefinition:
    return ViewDefinition(
        name,
        columns=(Column(1, "a", DataType("int8")),),
        sql={TRINITY_DIALECT: sql},
        referenced=(("ns", "t"),),
    )


@pytest.fixture
def lake(backend: tuple[str, dict[str, Any]]) -> Iterator[Lakehouse]:
    uri, options = backend
    lakehouse = Lakehouse.create(uri, storage_options=options)
    with lakehouse.begin() as txn:
        txn.create_namespace("ns")
        txn.create_table("ns", table_def("t", "a"))
    yield lakehouse


def test_create_list_load_replace_drop(lake: Lakehouse) -> None:
    with lake.begin() as txn:
        assert txn.create_view("ns", view_def("v"))
        assert txn.create_view("ns", view_def("b"))
    before = lake.latest_version()
    txn = lake.begin()
    assert txn.list_views("ns") == ["b", "v"]
    assert txn.list_tables("ns") == ["t"]  # a view is never listed as a table
    assert txn.view_exists("ns", "v") and not txn.table_exists("ns", "v")
    assert txn.load_view("ns", "v") == view_def("v")
    assert not txn.create_view("ns", view_def("v", "SELECT 2 AS a"), if_not_exists=True)
    with pytest.raises(ObjectExistsError, match=r"view 'ns\.v' already exists"):
        txn.create_view("ns", view_def("v", "SELECT 2 AS a"))
    assert txn.create_view("ns", view_def("v", "SELECT 2 AS a"), or_replace=True)
    assert txn.drop_view("ns", "b")
    assert not txn.drop_view("ns", "b", if_exists=True)
    with pytest.raises(NoSuchViewError, match=r"ns\.b"):
        txn.drop_view("ns", "b")
    txn.commit()
    latest = lake.begin(read_only=True)
    assert latest.list_views("ns") == ["v"]
    assert latest.load_view("ns", "v").sql == {"trinity": "SELECT 2 AS a"}
    # Time travel: the version before the change has the old definitions.
    old = lake.begin(read_only=True, version=before)
    assert old.list_views("ns") == ["b", "v"]
    assert old.load_view("ns", "v").sql == {"trinity": "SELECT a FROM ns.t"}
    with pytest.raises(NoSuchNamespaceError):
        latest.list_views("nowhere")


def test_views_and_tables_share_names(lake: Lakehouse) -> None:
    with lake.begin() as txn:
        txn.create_view("ns", view_def("v"))
    txn = lake.begin()
    with pytest.raises(ObjectExistsError, match=r"table 'ns\.t' already exists"):
        txn.create_view("ns", view_def("t"))
    with pytest.raises(ObjectExistsError, match=r"table 'ns\.t' already exists"):
        txn.create_view("ns", view_def("t"), or_replace=True)
    with pytest.raises(ObjectExistsError, match=r"view 'ns\.v' already exists"):
        txn.create_table("ns", table_def("v", "a"))
    with pytest.raises(ObjectExistsError, match=r"view 'ns\.v' already exists"):
        txn.rename_table("ns", "t", "ns", "v")
    with pytest.raises(NoSuchTableError):
        txn.drop_table("ns", "v")
    with pytest.raises(NoSuchViewError):
        txn.drop_view("ns", "t")


def test_concurrent_table_and_view_of_one_name_conflict(lake: Lakehouse) -> None:
    first, second = lake.begin(), lake.begin()
    first.create_view("ns", view_def("x"))
    second.create_table("ns", table_def("x", "a"))
    first.commit()
    with pytest.raises(CommitConflictError):
        second.commit()
    assert lake.begin().list_tables("ns") == ["t"]


def test_a_view_made_while_its_table_is_dropped_both_commit(lake: Lakehouse) -> None:
    # A view does not hold its tables: it fails when queried (the SQL layer's message).
    making, dropping = lake.begin(), lake.begin()
    making.create_view("ns", view_def("v"))
    dropping.drop_table("ns", "t")
    dropping.commit()
    making.commit()
    txn = lake.begin()
    assert txn.list_views("ns") == ["v"] and txn.list_tables("ns") == []


def test_drop_namespace_counts_and_cascades_views(lake: Lakehouse) -> None:
    with lake.begin() as txn:
        txn.create_view("ns", view_def("v"))
    with pytest.raises(NamespaceNotEmptyError, match="2 table\\(s\\) or view\\(s\\)"):
        lake.begin().drop_namespace("ns")
    with lake.begin() as txn:
        txn.drop_table("ns", "t")
    with pytest.raises(NamespaceNotEmptyError, match="1 table"):
        lake.begin().drop_namespace("ns")
    with lake.begin() as txn:
        assert txn.drop_namespace("ns", cascade=True)
    with lake.begin() as txn:
        txn.create_namespace("ns")
        assert txn.list_views("ns") == []


def test_a_view_created_concurrently_stops_a_namespace_drop(lake: Lakehouse) -> None:
    with lake.begin() as txn:
        txn.drop_table("ns", "t")
    dropping, making = lake.begin(), lake.begin()
    dropping.drop_namespace("ns")
    making.create_view("ns", view_def("v"))
    making.commit()
    with pytest.raises(CommitConflictError):
        dropping.commit()
