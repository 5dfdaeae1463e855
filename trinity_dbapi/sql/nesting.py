"""How deeply a statement may nest, and the recursion budget that makes that depth work.

sqlglot's parser and generator, tree copies and our own passes over a
statement (binding, table references, pruning, the text DuckDB runs) recurse
once or several times per level of nesting: at Python's default recursion
limit of 1000, about 40 levels of parentheses or nested function calls
overflowed. BI tools generate deep ``CASE`` / ``COALESCE`` chains, and DuckDB
runs such text, so a statement may nest up to :data:`MAX_NESTING_DEPTH`
levels:

* :func:`check_depth` measures the nesting of a statement's tokens without
  recursing (brackets of every kind and ``CASE ... END``), before anything
  recursive runs, and refuses a deeper statement with
  :class:`~trinity_dbapi.errors.NestingTooDeepError`;
* :func:`recursion_budget` raises the interpreter's recursion limit while a
  statement is parsed and executed, enough for that depth in every pass
  (measured: at most 26 Python frames per level, budgeted at
  :data:`FRAMES_PER_LEVEL`), and turns a ``RecursionError`` that still
  happens (a chain the token scan does not count, such as thousands of
  ``NOT NOT ...``) into the same error. Python 3.11 runs Python-to-Python
  calls without growing the C stack, so the raised limit is safe in threads
  too (3000 levels were measured to run in a thread of the default size).

Imports from sql/: nothing.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterable, Iterator

from sqlglot.tokens import Token, TokenType

from trinity_dbapi.errors import NestingTooDeepError

#: The deepest nesting of brackets and ``CASE`` expressions a statement may have.
MAX_NESTING_DEPTH = 200
#: Python frames budgeted per level of nesting (26 measured, for nested
#: scalar subqueries; parentheses take 23, COALESCE 25, CASE 19).
FRAMES_PER_LEVEL = 40
#: Frames for everything around a statement (the caller's own stack included).
BASE_FRAMES = 2000
#: The recursion limit while a statement runs.
BUDGET = BASE_FRAMES + FRAMES_PER_LEVEL * MAX_NESTING_DEPTH

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE, TokenType.CASE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE, TokenType.END})

_lock = threading.Lock()
_active = 0  # statements inside recursion_budget(), in any thread
_restore: int | None = None  # the limit to put back when the last one leaves


def nesting_depth(tokens: Iterable[Token]) -> int:
    """The deepest nesting of brackets and ``CASE ... END`` in ``tokens`` (no recursion)."""
    depth = deepest = 0
    for token in tokens:
        if token.token_type in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif token.token_type in _CLOSE:
            depth = max(depth - 1, 0)
    return deepest


def check_depth(tokens: Iterable[Token]) -> None:
    """Refuse a statement nested deeper than :data:`MAX_NESTING_DEPTH`.

    Raises:
        NestingTooDeepError: the statement nests too deeply.
    """
    depth = nesting_depth(tokens)
    if depth > MAX_NESTING_DEPTH:
        raise NestingTooDeepError(depth, MAX_NESTING_DEPTH)


@contextlib.contextmanager
def recursion_budget() -> Iterator[None]:
    """Run a statement's passes with enough recursion for :data:`MAX_NESTING_DEPTH`.

    The recursion limit is process-wide: it is raised when the first
    statement (in any thread) enters and put back when the last one leaves,
    unless someone else changed it meanwhile. A ``RecursionError`` inside
    becomes :class:`~trinity_dbapi.errors.NestingTooDeepError`.
    """
    global _active, _restore
    with _lock:
        if _active == 0 and sys.getrecursionlimit() < BUDGET:
            _restore = sys.getrecursionlimit()
            sys.setrecursionlimit(BUDGET)
        _active += 1
    try:
        yield
    except RecursionError:
        raise NestingTooDeepError(None, MAX_NESTING_DEPTH) from None
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _restore is not None:
                if sys.getrecursionlimit() == BUDGET:  # nobody else changed it meanwhile
                    with contextlib.suppress(RecursionError):
                        sys.setrecursionlimit(_restore)
                _restore = None
