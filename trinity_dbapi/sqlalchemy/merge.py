"""``merge()``: a SQLAlchemy construct for trinity SQL's ``MERGE INTO`` (DuckDB's syntax).

SQLAlchemy has no generic MERGE construct, so this module adds a small one:
an executable clause element whose ``WHEN`` clauses are added by generative
methods, compiled for the trinity dialect only (another dialect raises
``CompileError``). Every part is compiled by the dialect's own compiler
(tables, subqueries, ``values()``, conditions, bound parameters in text
order), so parameters, schemas and quoting behave as in ``update()``.

    stmt = (
        merge(orders)
        .using(staging)
        .on(orders.c.id == staging.c.id)
        .when_matched_then_update({"amount": staging.c.amount})
        .when_not_matched_then_insert({"id": staging.c.id, "amount": staging.c.amount})
    )
    with engine.begin() as conn:
        print(conn.execute(stmt).rowcount)

It works on SQLAlchemy 1.4 and 2.x: only ``Executable``, ``ClauseElement``
and ``sqlalchemy.ext.compiler.compiles`` are used.

Imports from sqlalchemy/: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import ArgumentError, CompileError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ClauseElement, Executable

__all__ = ["Merge", "merge"]


@dataclass(frozen=True)
class _When:
    """One ``WHEN`` clause: which rows, an optional extra condition, and the action."""

    kind: str  # "MATCHED", "NOT MATCHED" or "NOT MATCHED BY SOURCE"
    condition: Any
    action: str  # "UPDATE", "DELETE", "INSERT" or "DO NOTHING"
    values: tuple[tuple[str, Any], ...] | None = None  # None: UPDATE SET * / INSERT *


class Merge(Executable, ClauseElement):  # type: ignore[misc]
    """``MERGE INTO target USING source ON condition WHEN ...``; build it with :func:`merge`."""

    __visit_name__ = "trinity_merge"
    inherit_cache = False  # the WHEN clauses are plain Python state, not a cache key
    # SQLAlchemy 1.4's library-level autocommit: a MERGE changes data, like UPDATE.
    _execution_options = Executable._execution_options.union({"autocommit": True})

    def __init__(self, target: Any) -> None:
        if not isinstance(target, sa.Table):
            raise ArgumentError(
                f"merge() writes a Table, not {type(target).__name__}; pass the Table itself"
            )
        self.target = target
        self.source: Any = None
        self.condition: Any = None
        self.whens: tuple[_When, ...] = ()

    def _copy(self, **changes: Any) -> Merge:
        new = Merge(self.target)
        new.source, new.condition, new.whens = self.source, self.condition, self.whens
        for name, value in changes.items():
            setattr(new, name, value)
        return new

    def using(self, source: Any) -> Merge:
        """The source rows: a Table, an alias, a subquery or ``values(...).alias(...)``."""
        return self._copy(source=source)

    def on(self, condition: Any) -> Merge:
        """The condition that matches source rows to target rows."""
        return self._copy(condition=condition)

    def _when(self, when: _When) -> Merge:
        return self._copy(whens=(*self.whens, when))

    def when_matched_then_update(
        self, values: Mapping[Any, Any] | None = None, condition: Any = None
    ) -> Merge:
        """``WHEN MATCHED [AND condition] THEN UPDATE SET ...`` (``None``: ``SET *``)."""
        return self._when(_When("MATCHED", condition, "UPDATE", _pairs(self.target, values)))

    def when_matched_then_delete(self, condition: Any = None) -> Merge:
        """``WHEN MATCHED [AND condition] THEN DELETE``."""
        return self._when(_When("MATCHED", condition, "DELETE"))

    def when_matched_then_do_nothing(self, condition: Any = None) -> Merge:
        """``WHEN MATCHED [AND condition] THEN DO NOTHING``."""
        return self._when(_When("MATCHED", condition, "DO NOTHING"))

    def when_not_matched_then_insert(
        self, values: Mapping[Any, Any] | None = None, condition: Any = None
    ) -> Merge:
        """``WHEN NOT MATCHED [AND condition] THEN INSERT (...) VALUES (...)`` (``None``: ``INSERT *``)."""
        return self._when(_When("NOT MATCHED", condition, "INSERT", _pairs(self.target, values)))

    def when_not_matched_then_do_nothing(self, condition: Any = None) -> Merge:
        """``WHEN NOT MATCHED [AND condition] THEN DO NOTHING``."""
        return self._when(_When("NOT MATCHED", condition, "DO NOTHING"))

    def when_not_matched_by_source_then_update(
        self, values: Mapping[Any, Any], condition: Any = None
    ) -> Merge:
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET ...``."""
        pairs = _pairs(self.target, values)
        return self._when(_When("NOT MATCHED BY SOURCE", condition, "UPDATE", pairs))

    def when_not_matched_by_source_then_delete(self, condition: Any = None) -> Merge:
        """``WHEN NOT MATCHED BY SOURCE [AND condition] THEN DELETE``."""
        return self._when(_When("NOT MATCHED BY SOURCE", condition, "DELETE"))


def merge(target: sa.Table) -> Merge:
    """Start a ``MERGE INTO target``; add ``using``, ``on`` and ``when_...`` clauses.

    Args:
        target: the table written.

    Returns:
        A :class:`Merge`: each method returns a new one, as ``update()``'s do.
    """
    return Merge(target)


def _pairs(table: sa.Table, values: Mapping[Any, Any] | None) -> tuple[tuple[str, Any], ...] | None:
    """The ``{column or name: value}`` of an UPDATE or INSERT as ``(name, value)``s."""
    if values is None:
        return None
    pairs = []
    for key, value in values.items():
        name = key if isinstance(key, str) else getattr(key, "key", None)
        if not isinstance(name, str) or name not in table.c:
            raise ArgumentError(f"{table.fullname} has no column {key!r}; check the table")
        pairs.append((table.c[name].name, value))
    if not pairs:
        raise ArgumentError("an UPDATE or INSERT of merge() needs at least one column")
    return tuple(pairs)


@compiles(Merge)
def _refuse(element: Merge, compiler: Any, **kw: Any) -> str:
    raise CompileError(
        f"merge() is trinity SQL's MERGE INTO; the {compiler.dialect.name} dialect cannot "
        "compile it: run it on a trinity engine"
    )


@compiles(Merge, "trinity")
def _compile(element: Merge, compiler: Any, **kw: Any) -> str:
    if element.source is None or element.condition is None or not element.whens:
        raise CompileError(
            f"merge({element.target.fullname}) needs .using(source), .on(condition) and at "
            "least one .when_...() clause"
        )
    # Placeholders are numbered in the order they are compiled: text order.
    parts = [
        "MERGE INTO",
        compiler.process(element.target, asfrom=True, **kw),
        "USING",
        compiler.process(element.source, asfrom=True, **kw),
        "ON",
        compiler.process(element.condition, **kw),
    ]
    quote = compiler.preparer.quote
    for when in element.whens:
        parts.append(f"WHEN {when.kind}")
        if when.condition is not None:
            parts.append(f"AND {compiler.process(when.condition, **kw)}")
        if when.action == "UPDATE":
            if when.values is None:
                parts.append("THEN UPDATE SET *")
            else:
                sets = ", ".join(
                    f"{quote(name)} = {compiler.process(_value(value), **kw)}"
                    for name, value in when.values
                )
                parts.append(f"THEN UPDATE SET {sets}")
        elif when.action == "INSERT":
            if when.values is None:
                parts.append("THEN INSERT *")
            else:
                names = ", ".join(quote(name) for name, _ in when.values)
                values = ", ".join(compiler.process(_value(v), **kw) for _, v in when.values)
                parts.append(f"THEN INSERT ({names}) VALUES ({values})")
        else:
            parts.append(f"THEN {when.action}")
    return " ".join(parts)


def _value(value: Any) -> Any:
    """A column, an expression, or a Python value as a bound parameter."""
    return value if isinstance(value, ClauseElement) else sa.literal(value)
