"""Helpers of the PySpark data source tests: a lakehouse seen through Spark and the DB-API."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import types as T

from trinity_dbapi.tables import managed

#: The data source's name, as ``spark.read.format`` takes it.
FORMAT = "trinitylake"


@dataclass
class Lake:
    """One lakehouse: its URI and storage options, a DB-API connection, and Spark."""

    spark: Any
    uri: str
    conn: Any  # an autocommit DB-API connection
    root: Path | None = None  # the local directory, None on S3
    storage_options: Mapping[str, Any] = field(default_factory=dict)

    # -- the DB-API side ----------------------------------------------------------

    def execute(self, sql: str, params: Any = None) -> None:
        self.conn.cursor().execute(sql, params)

    def rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self.conn.cursor().execute(sql, params).fetchall()

    def version(self) -> int:
        """The latest lakehouse version: every commit adds exactly one."""
        return int(self.rows("SELECT max(version) FROM system.versions")[0][0])

    def data_files(self, table: str) -> dict[str, str]:
        """The table's data files at the latest version: label -> path under the root."""
        namespace, name = table.split(".")
        definition = self.conn.lakehouse.begin().load_table(namespace, name)
        return managed.metadata(self.conn.lakehouse.storage, definition).files()

    # -- the Spark side -----------------------------------------------------------

    def reader(self, options: Mapping[str, Any] | None = None) -> Any:
        """``spark.read.format("trinitylake")`` on this lakehouse, with ``options``."""
        reader = self.spark.read.format(FORMAT).option("uri", self.uri)
        if self.storage_options:
            reader = reader.option("storageOptions", json.dumps(dict(self.storage_options)))
        for key, value in (options or {}).items():
            reader = reader.option(key, value)
        return reader

    def read(self, table: str, options: Mapping[str, Any] | None = None) -> Any:
        return self.reader(options).load(table)

    def save(
        self,
        frame: Any,
        table: str,
        mode: str = "append",
        options: Mapping[str, Any] | None = None,
    ) -> None:
        """``frame.write.format("trinitylake")...save(table)`` on this lakehouse."""
        writer = frame.write.format(FORMAT).mode(mode).option("uri", self.uri)
        if self.storage_options:
            writer = writer.option("storageOptions", json.dumps(dict(self.storage_options)))
        for key, value in (options or {}).items():
            writer = writer.option(key, value)
        writer.save(table)


def spark_rows(frame: Any, *order_by: str) -> list[tuple[Any, ...]]:
    """The DataFrame's rows as the DB-API returns them, in ``order_by`` order.

    Spark hands TIMESTAMP WITH TIME ZONE values back as naive local times,
    and structs as Rows; the DB-API gives aware UTC datetimes and dicts. Maps
    are dicts (the DB-API gives ``[(key, value), ...]``: compare ``dict(...)``),
    as their entries have no order.
    """
    schema = frame.schema
    collected = (frame.orderBy(*order_by) if order_by else frame).collect()
    return [tuple(_plain(row[f.name], f.dataType) for f in schema.fields) for row in collected]


def _plain(value: Any, data_type: Any) -> Any:
    if value is None:
        return None
    if isinstance(data_type, T.StructType):
        return {f.name: _plain(value[f.name], f.dataType) for f in data_type.fields}
    if isinstance(data_type, T.ArrayType):
        return [_plain(item, data_type.elementType) for item in value]
    if isinstance(data_type, T.MapType):
        return {
            _plain(k, data_type.keyType): _plain(v, data_type.valueType) for k, v in value.items()
        }
    if isinstance(data_type, T.TimestampType):
        return value.astimezone(datetime.timezone.utc)  # a naive local time
    if isinstance(data_type, T.BinaryType):
        return bytes(value)
    return value


def files_on_disk(root: Path) -> set[str]:
    """Every file under ``root`` (directories left out), relative to it."""
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


def parquet_files(root: Path) -> set[str]:
    """The Parquet files under ``root`` (data and index files), relative to it."""
    return {str(path.relative_to(root)) for path in root.rglob("*.parquet")}
