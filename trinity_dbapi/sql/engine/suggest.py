"""Did you mean ...: the nearest existing names for a table or namespace that does not exist.

Only a statement that failed pays for it: :func:`explaining` runs the
statement and, when it raises :class:`~trinity_dbapi.errors.NoSuchObjectError`,
lists names from the tree (each namespace's tables and views by a key-range
scan, no definition read, the catalog tables by name) in the statement's own
transaction and adds the closest to the message. The closeness is
:mod:`difflib`'s ratio: the same name in another namespace first (``orders``
read in ``default`` is ``shop.orders``), then names within a small edit of
the one given, bare or qualified (``shop.order``, ``shpo.orders``).

On a connection whose lakehouse does not exist yet (``connect`` creates it at
the first write) the message says so instead: the path may be mistyped.

Imports from sql/engine/: session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from trinity_dbapi.errors import NoSuchNamespaceError, NoSuchObjectError, NoSuchTableError
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.lakehouse.objects import ViewIsNotATableError
from trinity_dbapi.sql.engine.session import Session

__all__ = ["closest", "explaining"]

T = TypeVar("T")

#: How close a name must be (difflib's ratio) to be suggested.
CUTOFF = 0.75
#: How much less close than the closest name another may be and still be suggested.
TIE = 0.05
#: At most this many suggestions.
SUGGESTIONS = 3
#: At most this many namespaces are listed for suggestions.
MAX_NAMESPACES = 500


def explaining(session: Session, work: Callable[[], T]) -> T:
    """``work()``; a missing table or namespace's error gets the names meant, if any."""
    try:
        return work()
    except ViewIsNotATableError:
        raise  # its message says what to do with the view it names
    except NoSuchObjectError as exc:
        hint = _hint(session, exc)
        if hint:
            # The suggestion is the fix: it replaces the general one.
            exc.args = (f"{exc.kind} {exc.name!r} does not exist; {hint}",)
        raise


def closest(name: str, candidates: Iterable[str], cutoff: float = CUTOFF) -> list[str]:
    """The candidates nearest ``name`` (case-insensitively), best first, at most three.

    Only those about as close as the closest: ``shop.order`` means
    ``shop.orders``, not also ``shop.big_orders``.
    """
    import difflib  # only once a statement failed: not on the start-up path

    by_key: dict[str, str] = {}
    for candidate in candidates:
        by_key.setdefault(candidate.lower(), candidate)
    matcher = difflib.SequenceMatcher(b=name.lower())
    scored = []
    for key in by_key:
        matcher.set_seq1(key)
        score = matcher.ratio()
        if score >= cutoff:
            scored.append((-score, key))
    scored.sort()
    if not scored:
        return []
    best = -scored[0][0]
    return [by_key[key] for score, key in scored[:SUGGESTIONS] if -score >= best - TIE]


def _hint(session: Session, exc: NoSuchObjectError) -> str:
    if not session.lakehouse_exists:
        return (
            f"there is no lakehouse at {session.location!r} yet (it is created by the "
            "connection's first write): check the path"
        )
    try:
        if isinstance(exc, NoSuchTableError):
            names = _tables_meant(session, exc.namespace, exc.table)
        elif isinstance(exc, NoSuchNamespaceError):
            names = closest(exc.name, _namespaces(session), cutoff=0.6)
        else:
            return ""
    except Exception:  # noqa: BLE001 - a hint must never hide the error it explains
        return ""
    return f"did you mean {_either(names)}?" if names else ""


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _namespaces(session: Session) -> list[str]:
    return [*session.transaction().list_namespaces(), *catalog.RESERVED_NAMESPACES]


def _tables_meant(session: Session, namespace: str, table: str) -> list[str]:
    """Qualified names of the tables and views nearest ``namespace.table``."""
    txn = session.transaction()
    qualified: list[str] = []
    for where in _namespaces(session)[:MAX_NAMESPACES]:
        if where in catalog.RESERVED_NAMESPACES:
            names: Iterable[str] = catalog.catalog_table_names(where)
        else:
            names = [*txn.list_tables(where), *txn.list_views(where)]
        qualified.extend(f"{where}.{name}" for name in names)
    wanted = f"{namespace}.{table}"
    qualified = [name for name in qualified if name != wanted]  # a view named in a table's place
    same_name = [name for name in qualified if name.partition(".")[2].lower() == table.lower()]
    if same_name:  # the name is right, the namespace is not
        return sorted(same_name)[:SUGGESTIONS]
    near = closest(wanted, qualified)
    if near:
        return near
    # A long namespace name hides a small edit of the table's name.
    bare = {name.partition(".")[2]: name for name in qualified}
    return [bare[name] for name in closest(table, bare)]
