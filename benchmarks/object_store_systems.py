"""The systems of ``object_store.py``: trinity, delta-rs and pyiceberg behind one interface.

Each is driven through its usual Python API: trinity through the PEP 249 driver
(autocommit), delta-rs through ``write_deltalake`` and ``DeltaTable``
(``QueryBuilder`` for SQL), pyiceberg through ``SqlCatalog`` on SQLite.

Each class (by name in ``CLASSES``) is made from a store's name, its endpoint and a
local work folder, and has ``create``, ``append``, ``count_sum``, ``point``, ``scan``,
``describe`` and ``merge`` (which sets ``merge_seconds``); trinity's also reports
its connection's ``storage`` stats. ``rows`` makes the ``(id INT8, v FLOAT8)`` rows
every table holds; ``stats_dict`` turns trinity's stats into the report's dict.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from object_store_stores import BUCKET, NOT_ON, delta_target, trinity_target


class Trinity:
    def __init__(self, store: str, endpoint: str, work: str) -> None:
        import trinity_dbapi

        uri, options = trinity_target(store, endpoint)
        self.con = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
        self.cur = self.con.cursor()

    def storage(self) -> Any:
        """The requests and rounds this connection has cost the store so far."""
        return self.con.storage_stats

    def create(self, name: str) -> None:
        self.cur.execute(f"CREATE TABLE IF NOT EXISTS {name} (id INT8, v FLOAT8)")

    def append(self, name: str, rows: Any) -> None:
        if rows.num_rows == 1:
            row = rows.to_pylist()[0]
            self.cur.execute(f"INSERT INTO {name} VALUES (?, ?)", [row["id"], row["v"]])
        else:
            self.cur.ingest(name, rows)

    def count_sum(self, name: str, where: str = "") -> tuple[int, float]:
        self.cur.execute(f"SELECT count(*), sum(v) FROM {name} {where}")
        return tuple(self.cur.fetchone())  # type: ignore[return-value]

    def point(self, name: str) -> list[Any]:
        self.cur.execute(f"SELECT id, v FROM {name} WHERE id = 7")
        return [tuple(r) for r in self.cur.fetchall()]

    def scan(self, name: str) -> int:
        self.cur.execute(f"SELECT * FROM {name}")
        return int(self.cur.fetch_arrow_table().num_rows)

    def describe(self, name: str) -> list[str]:
        self.cur.execute(f"DESCRIBE {name}")
        return [str(r[0]) for r in self.cur.fetchall()]

    def merge(self, name: str, source: Any, start: Callable[[], None]) -> None:
        self.cur.execute("CREATE TABLE IF NOT EXISTS merge_src (id INT8, v FLOAT8)")
        self.cur.execute("DELETE FROM merge_src")
        self.cur.ingest("merge_src", source)
        start()
        before = self.storage()
        started = time.perf_counter()
        self.cur.execute(
            f"MERGE INTO {name} t USING merge_src s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
        )
        self.merge_seconds = time.perf_counter() - started
        self.merge_storage = self.storage().since(before)


class Delta:
    def __init__(self, store: str, endpoint: str, work: str) -> None:
        self.base, self.options = delta_target(store, endpoint)

    def uri(self, name: str) -> str:
        return f"{self.base}/{name}"

    def create(self, name: str) -> None:
        pass

    def append(self, name: str, rows: Any) -> None:
        from deltalake import write_deltalake

        write_deltalake(self.uri(name), rows, mode="append", storage_options=self.options)

    def _query(self, name: str, sql: str) -> Any:
        import pyarrow as pa
        from deltalake import DeltaTable, QueryBuilder

        table = DeltaTable(self.uri(name), storage_options=self.options)
        return pa.table(QueryBuilder().register("t", table).execute(sql).read_all())

    def count_sum(self, name: str, where: str = "") -> tuple[int, float]:
        result = self._query(name, f"SELECT count(*) AS c, sum(v) AS s FROM t {where}")
        return int(result.column(0)[0].as_py()), float(result.column(1)[0].as_py())

    def point(self, name: str) -> list[Any]:
        result = self._query(name, "SELECT id, v FROM t WHERE id = 7")
        return [tuple(r.values()) for r in result.to_pylist()]

    def scan(self, name: str) -> int:
        from deltalake import DeltaTable

        table = DeltaTable(self.uri(name), storage_options=self.options)
        return int(table.to_pyarrow_table().num_rows)

    def describe(self, name: str) -> list[str]:
        from deltalake import DeltaTable

        table = DeltaTable(self.uri(name), storage_options=self.options)
        return [field.name for field in table.schema().fields]

    def merge(self, name: str, source: Any, start: Callable[[], None]) -> None:
        from deltalake import DeltaTable

        start()
        started = time.perf_counter()
        table = DeltaTable(self.uri(name), storage_options=self.options)
        (
            table.merge(source, "t.id = s.id", source_alias="s", target_alias="t")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute()
        )
        self.merge_seconds = time.perf_counter() - started


class Iceberg:
    def __init__(self, store: str, endpoint: str, work: str) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        if store != "s3":
            raise ValueError(f"pyiceberg does not run on {store}: {NOT_ON[store]['iceberg']}")
        self.catalog = SqlCatalog(
            "bench",
            uri=f"sqlite:///{work}/iceberg.db",
            warehouse=f"s3://{BUCKET}/iceberg",
            **{
                "s3.endpoint": endpoint,
                "s3.access-key-id": "testing",
                "s3.secret-access-key": "testing",
                "s3.region": "us-east-1",
            },
        )

    def create(self, name: str) -> None:
        import pyarrow as pa

        if ("b",) not in self.catalog.list_namespaces():
            self.catalog.create_namespace("b")
        schema = pa.schema([("id", pa.int64()), ("v", pa.float64())])
        if not self.catalog.table_exists(f"b.{name}"):
            self.catalog.create_table(f"b.{name}", schema=schema)

    def append(self, name: str, rows: Any) -> None:
        self.catalog.load_table(f"b.{name}").append(rows)

    def count_sum(self, name: str, where: str = "") -> tuple[int, float]:
        import pyarrow.compute as pc

        table = self.catalog.load_table(f"b.{name}")
        scan = table.scan(row_filter=where.replace("WHERE", "").strip() or "True")
        data = scan.to_arrow()
        return data.num_rows, float(pc.sum(data.column("v")).as_py() or 0)

    def point(self, name: str) -> list[Any]:
        data = self.catalog.load_table(f"b.{name}").scan(row_filter="id == 7").to_arrow()
        return [tuple(r.values()) for r in data.to_pylist()]

    def scan(self, name: str) -> int:
        return int(self.catalog.load_table(f"b.{name}").scan().to_arrow().num_rows)

    def describe(self, name: str) -> list[str]:
        return [field.name for field in self.catalog.load_table(f"b.{name}").schema().fields]

    def merge(self, name: str, source: Any, start: Callable[[], None]) -> None:
        start()
        started = time.perf_counter()
        self.catalog.load_table(f"b.{name}").upsert(source, join_cols=["id"])
        self.merge_seconds = time.perf_counter() - started


CLASSES: dict[str, type] = {"trinity": Trinity, "delta": Delta, "iceberg": Iceberg}


def rows(start: int, count: int) -> Any:
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + count, dtype=np.int64)
    return pa.table({"id": ids, "v": ids.astype(np.float64) / 2})


def stats_dict(stats: Any) -> dict[str, int]:
    """trinity's :class:`~trinity_dbapi.storage.StorageStats`, with its request total."""
    out = {key: int(value) for key, value in dataclasses.asdict(stats).items()}
    out["requests"] = int(stats.requests)
    return out
