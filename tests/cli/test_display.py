"""Results a person can read: the formats for people, a screenful, ``\\x``, NULL, the pager, plans.

The first part tests the pure pieces (the ``markdown``, ``line``, expanded
and plan formats, the head and tail a screenful keeps) and the streamed
sample over a real cursor; the second the :class:`Shell`'s dot-commands
over a fake connection; the last the ``trinity`` program under a real
pseudo-terminal, as a person types at it.
"""

from __future__ import annotations

import dataclasses
import decimal
import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.cli import FORMATTERS, Shell, build_parser
from trinity_dbapi.cli.display import (
    DEFAULT_PAGER,
    Display,
    PagedText,
    pager_command,
    sample_rows,
    select_rows,
    split_limit,
)
from trinity_dbapi.cli.formats import (
    Gap,
    format_expanded,
    format_line,
    format_markdown,
    format_plan,
    format_table,
    is_plan,
)

COLUMNS = ["id", "name", "price"]
ROWS = [
    (1, "apple", decimal.Decimal("1.50")),
    (22, None, decimal.Decimal("10.00")),
    (333, "a|b\nc", None),
]
DIM, NORMAL = "\x1b[2m", "\x1b[22m"


# --- the formats for people -----------------------------------------------------------


def test_markdown_and_line_are_modes() -> None:
    assert list(FORMATTERS) == ["table", "csv", "json", "markdown", "line"]
    assert build_parser().parse_args(["u", "--format", "markdown"]).format == "markdown"
    assert build_parser().parse_args(["u", "--format", "line"]).format == "line"


def test_format_markdown() -> None:
    assert format_markdown(COLUMNS, ROWS) == (
        "|  id | name      | price |\n"
        "|----:|-----------|------:|\n"
        "|   1 | apple     |  1.50 |\n"
        "|  22 | NULL      | 10.00 |\n"
        "| 333 | a\\|b<br>c |  NULL |"
    )
    assert format_markdown(["a"], []) == "| a   |\n|-----|"
    assert format_markdown(["a"], [(None,)], null="") == "| a   |\n|-----|\n|     |"


def test_format_line() -> None:
    # sqlite3's line mode: names right-aligned, values as they are, a blank line between rows
    assert format_line(COLUMNS, ROWS[:2]) == (
        "   id = 1\n name = apple\nprice = 1.50\n\n   id = 22\n name = NULL\nprice = 10.00"
    )
    assert format_line(["s"], [("l1\nl2",)]) == "s = l1\nl2"
    assert format_line(["a"], []) == ""
    assert format_line(["a"], [(None,)], null="-", style_null=lambda c: f"<{c}>") == "a = <->"


def test_format_expanded() -> None:
    assert format_expanded(COLUMNS, ROWS[:2]) == (
        "-[ RECORD 1 ]-\nid    | 1\nname  | apple\nprice | 1.50\n"
        "-[ RECORD 2 ]-\nid    | 22\nname  | NULL\nprice | 10.00\n(2 rows)"
    )
    # a gap: the records left out are named, the ones after keep their numbers
    assert format_expanded(["n"], [(1,), (9,)], gap=Gap(1, 7)) == (
        "-[ RECORD 1 ]-\nn | 1\n-[ RECORDS 2 TO 8 NOT SHOWN ]\n-[ RECORD 9 ]-\nn | 9\n"
        "9 rows (2 shown)"
    )
    assert format_expanded(["n"], [(1,)], gap=Gap(1, 4)).splitlines()[-2:] == [
        "-[ RECORDS 2 TO 5 NOT SHOWN ]",
        "5 rows (1 shown)",
    ]
    assert format_expanded(["a"], []) == "(0 rows)"


def test_format_table_with_a_gap_and_styled_nulls() -> None:
    rows = [(1, None), (2, "NULL"), (99, "z")]
    assert format_table(["n", "s"], rows, gap=Gap(2, 96), style_null=lambda c: f"<{c}>") == (
        "  n | s\n"
        "----+------\n"
        "  1 | <NULL>\n"  # the style takes no width: the cell was aligned before it
        "  2 | NULL\n"
        " ·  |  ·\n"
        " 99 | z\n"
        "99 rows (3 shown)"
    )
    assert format_table(["s"], [(None,)], null="") == " s\n---\n\n(1 row)"


def test_plans() -> None:
    assert is_plan(["explain_key", "explain_value"]) and not is_plan(["key", "value"])
    plan = [("physical_plan", "┌──┐\n│ x │\n└──┘\n"), ("trinity_storage", "requests: 2")]
    assert format_plan(["explain_key", "explain_value"], plan) == (
        "┌──┐\n│ x │\n└──┘\ntrinity_storage: requests: 2"
    )


# --- a screenful: the first and last rows -------------------------------------------------


def test_split_limit() -> None:
    # as duckdb: the top gets the odd row
    assert [split_limit(n) for n in (1, 2, 19, 40)] == [(1, 0), (1, 1), (10, 9), (20, 20)]


@pytest.mark.parametrize(
    ("total", "limit", "shown", "gap"),
    [
        (0, 5, [], None),
        (5, 5, [0, 1, 2, 3, 4], None),
        (6, 5, [0, 1, 2, 3, 4, 5], None),  # one hidden row is shown instead of the row of ·
        (7, 5, [0, 1, 2, 5, 6], Gap(3, 2)),
        (1000, 4, [0, 1, 998, 999], Gap(2, 996)),
        (1000, 1, [0], Gap(1, 999)),
        (1000, 0, list(range(1000)), None),  # 0: all
    ],
)
def test_select_rows(total: int, limit: int, shown: list[int], gap: Gap | None) -> None:
    rows, got = select_rows([(i,) for i in range(total)], limit)
    assert ([row[0] for row in rows], got) == (shown, gap)


def test_select_rows_narrows_a_sample() -> None:
    rows, gap = select_rows([(i,) for i in range(100)], 20)
    assert select_rows(rows, 4, gap) == ([(0,), (1,), (98,), (99,)], Gap(2, 96))


@pytest.fixture(scope="module")
def cursor(tmp_path_factory: pytest.TempPathFactory) -> Any:
    connection = trinity_dbapi.connect(str(tmp_path_factory.mktemp("lake")), autocommit=True)
    yield connection.cursor()
    connection.close()


@pytest.mark.parametrize("total", [0, 1, 9, 10, 11, 12, 99_999, 100_000, 100_001, 250_007])
@pytest.mark.parametrize("limit", [1, 2, 9])
def test_sample_rows_is_select_rows_streamed(
    cursor: Any, total: int, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.dbapi import pyvalues

    converted: list[int] = []
    rows_of = pyvalues.rows

    def counting(data: Any, first_row: int = 0) -> list[tuple[Any, ...]]:
        converted.append(data.num_rows)
        return rows_of(data, first_row)

    monkeypatch.setattr(pyvalues, "rows", counting)
    # The result streams in batches of 100,000 rows: the tail crosses their edges.
    cursor.execute(f"SELECT i, i::VARCHAR AS s FROM range({total}) AS t(i)")
    rows, gap = sample_rows(cursor, limit)
    assert (rows, gap) == select_rows([(i, str(i)) for i in range(total)], limit)
    # Only what is shown (and the one row more that tells a gap of one) became Python.
    assert sum(converted) <= limit + 1
    assert cursor.fetchone() is None  # the whole result was read


def test_sample_rows_of_a_cursor_without_batches() -> None:
    assert sample_rows(ListCursor(["n"], [(i,) for i in range(50)]), 4) == (
        [(0,), (1,), (48,), (49,)],
        Gap(2, 46),
    )


# --- the shell's dot-commands, over a fake connection -------------------------------------


class ListCursor:
    """A cursor over fixed rows: SELECT n returns n rows of (i, NULL, 'NULL')."""

    def __init__(self, columns: list[str] | None = None, rows: list[Any] | None = None) -> None:
        self.rowcount = -1
        self.description = [(c,) for c in columns] if columns else None
        self._rows = list(rows or [])

    def execute(self, sql: str, params: object = None) -> None:
        words = sql.split()
        if words[:2] == ["EXPLAIN", "SELECT"]:
            self.description = [("explain_key",), ("explain_value",)]
            self._rows = [("physical_plan", "┌───┐\n│ P │\n└───┘\n")]
            return
        count = int(words[1])
        self.description = [("i",), ("n",), ("s",)]
        self._rows = [(i, None, "NULL") for i in range(count)]

    def fetchmany(self, size: int) -> list[Any]:
        taken, self._rows = self._rows[:size], self._rows[size:]
        return taken

    def fetchall(self) -> list[Any]:
        return self.fetchmany(len(self._rows))


class ListConnection:
    def cursor(self) -> ListCursor:
        return ListCursor()


@pytest.fixture
def screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 24 x 80 colour terminal (shutil.get_terminal_size reads LINES and COLUMNS first)."""
    monkeypatch.setenv("LINES", "24")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("PAGER", raising=False)


def _shell(interactive: bool) -> tuple[Shell, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Shell(ListConnection(), out=out, err=err, interactive=interactive), out, err


def test_not_at_a_terminal_results_are_whole_and_as_they_were(screen: None) -> None:
    shell, out, _ = _shell(interactive=False)
    assert shell.run_script("SELECT 100")
    lines = out.getvalue().splitlines()
    assert len(lines) == 103 and lines[-1] == "(100 rows)"
    assert lines[2] == "  0 | NULL | NULL"  # no style, NULL as always
    assert "\x1b" not in out.getvalue()


def test_at_a_terminal_a_screenful(screen: None) -> None:
    shell, out, _ = _shell(interactive=True)
    assert shell.run_script("SELECT 100")
    lines = out.getvalue().splitlines()
    # 24 lines: the header and rule, 19 rows, the row of ·, the footer, and the prompt
    assert len(lines) == 23 and lines[-1] == "100 rows (19 shown)"
    assert lines[2].startswith("  0 | ") and lines[-2].startswith(" 99 | ")
    assert lines[12] == " ·  |  ·   |  ·"
    # NULL dimmed, the string 'NULL' not: they can be told apart
    assert lines[2] == f"  0 | {DIM}NULL{NORMAL} | NULL"
    out.truncate(0)
    out.seek(0)
    assert shell.run_script("SELECT 20")  # one row more than 19: shown, not a row of ·
    assert out.getvalue().splitlines()[-1] == "(20 rows)"


def test_maxrows(screen: None) -> None:
    shell, out, err = _shell(interactive=True)
    for line in (".maxrows", ".maxrows 4", "SELECT 100", ".maxrows", ".maxrows 0"):
        shell.run_command(line)
    assert shell.run_script("SELECT 100")
    assert shell.display.max_rows == 0
    shell.run_command(".maxrows -1")
    assert shell.display.max_rows == 0  # -1 as duckdb: all
    shell.run_command(".maxrows auto")
    assert shell.display.max_rows is None
    shell.run_command(".maxrows many")
    text = out.getvalue()
    assert text.startswith("maxrows is auto (a screenful)\n")
    assert "  0 | \x1b[2mNULL\x1b[22m | NULL\n  1 |" in text and "100 rows (4 shown)\n" in text
    assert "maxrows is 4\n" in text
    assert text.endswith(" 99 | \x1b[2mNULL\x1b[22m | NULL\n(100 rows)\n")
    assert err.getvalue() == "Error: usage: .maxrows [N|auto]\n"


def test_nullvalue(screen: None, monkeypatch: pytest.MonkeyPatch) -> None:
    shell, out, _ = _shell(interactive=True)
    shell.run_command(".nullvalue")
    shell.run_command(".nullvalue '(null)'")
    shell.run_script("SELECT 1")
    monkeypatch.setenv("NO_COLOR", "1")  # https://no-color.org: no style
    shell.run_command(".nullvalue ''")
    shell.run_script("SELECT 1")
    shell.run_command(".nullvalue")
    assert out.getvalue() == (
        "nullvalue is NULL (the default)\n"
        f" i | n      | s\n---+--------+------\n 0 | {DIM}(null){NORMAL} | NULL\n(1 row)\n"
        " i | n | s\n---+---+------\n 0 |   | NULL\n(1 row)\n"
        "nullvalue is ''\n"
    )
    # In a script too, once asked for; csv and json keep their own NULL.
    shell, out, _ = _shell(interactive=False)
    for line in (".nullvalue -", ".mode line"):
        shell.run_command(line)
    shell.run_script("SELECT 1")
    shell.run_command(".mode csv")
    shell.run_script("SELECT 1")
    assert out.getvalue() == "i = 0\nn = -\ns = NULL\ni,n,s\n0,,NULL\n"


def test_expanded_display(screen: None) -> None:
    shell, out, err = _shell(interactive=True)
    for line in ("\\x", "SELECT 2", "\\x", "\\x auto", ".expanded on", ".expanded maybe"):
        shell.meta(line) if line.startswith(("\\", ".")) else shell.run_script(line)
    assert out.getvalue() == (
        "Expanded display is on.\n"
        "-[ RECORD 1 ]-\ni | 0\n"
        f"n | {DIM}NULL{NORMAL}\ns | NULL\n"
        "-[ RECORD 2 ]-\ni | 1\n"
        f"n | {DIM}NULL{NORMAL}\ns | NULL\n(2 rows)\n"
        "Expanded display is off.\n"
        "Expanded display is used automatically.\n"
        "Expanded display is on.\n"
    )
    assert err.getvalue() == "Error: usage: .expanded [on|off|auto]\n"
    out.truncate(0)
    out.seek(0)
    shell.run_script("SELECT 100")  # a screenful of records: 24 lines hold 5 of 3 columns
    lines = out.getvalue().splitlines()
    assert lines[-1] == "100 rows (5 shown)"
    assert "-[ RECORDS 4 TO 98 NOT SHOWN ]" in lines and "-[ RECORD 100 ]-" in lines
    assert len(lines) == 3 * 4 + 1 + 2 * 4 + 1  # records of 4 lines, the gap, the footer


class WideCursor(ListCursor):
    def execute(self, sql: str, params: object = None) -> None:
        self.description = [("id",), ("text",)]
        self._rows = [(i, "w" * int(sql.split()[1])) for i in range(3)]


def test_expanded_auto_when_wider_than_the_screen(screen: None) -> None:
    out = io.StringIO()
    connection = ListConnection()
    connection.cursor = WideCursor  # type: ignore[method-assign]
    shell = Shell(connection, out=out, interactive=True)
    shell.meta("\\x auto")
    shell.run_script("SELECT 70")  # 80 columns hold it: a table
    assert out.getvalue().splitlines()[1:3] == [" id | text", "----+-" + "-" * 71]
    out.truncate(0)
    out.seek(0)
    shell.run_script("SELECT 90")  # too wide: records
    assert out.getvalue().splitlines()[:3] == [
        "-[ RECORD 1 ]" + "-" * 84,
        "id   | 0",
        "text | " + "w" * 90,
    ]


def test_plans_print_their_lines(screen: None) -> None:
    for interactive in (True, False):
        shell, out, _ = _shell(interactive=interactive)
        shell.run_script("EXPLAIN SELECT 1")
        assert out.getvalue() == "┌───┐\n│ P │\n└───┘\n"


def test_pager(screen: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paged = tmp_path / "paged.txt"
    monkeypatch.setenv("PAGER", f"cat > {paged}")
    shell, out, _ = _shell(interactive=True)
    for line in (".pager", ".pager on", ".pager"):
        shell.run_command(line)
    assert shell.run_script("SELECT 5")  # fits the screen: printed, NULL dimmed
    assert not paged.exists()
    assert shell.run_script("SELECT 100")  # taller: all of it, to the pager, unstyled
    assert paged.read_text().splitlines()[-2:] == [" 99 | NULL | NULL", "(100 rows)"]
    assert len(paged.read_text().splitlines()) == 103
    text = out.getvalue()
    assert text.startswith("pager is off\npager is on\n")
    assert f" 4 | {DIM}NULL{NORMAL} | NULL\n(5 rows)\n" in text and " 99 " not in text
    # Not at a terminal: never a pager.
    shell, out, _ = _shell(interactive=False)
    shell.run_command(".pager on")
    paged.unlink()
    assert shell.run_script("SELECT 100")
    assert not paged.exists() and out.getvalue().endswith(" 99 | NULL | NULL\n(100 rows)\n")


def test_a_pager_that_is_not_there(screen: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAGER", "no-such-pager-h1")
    shell, out, _ = _shell(interactive=True)
    shell.run_command(".pager on")
    assert shell.run_script("SELECT 100")  # sh says "not found"; the result is shown all the same
    assert out.getvalue().endswith(" 99 | NULL | NULL\n(100 rows)\n")


def test_pager_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAGER", "most -s")
    assert pager_command() == "most -s"
    monkeypatch.setenv("PAGER", " ")
    assert pager_command() in (DEFAULT_PAGER, "more")
    display = Display(io.StringIO(), interactive=True)
    display.show("fits")
    assert display.out.getvalue() == "fits\n"  # type: ignore[attr-defined]
    assert isinstance(PagedText("x"), str)


# --- the trinity program at a terminal ----------------------------------------------------

PROMPT = b"trinity> "


@dataclasses.dataclass
class Session:
    """What a person typing at ``trinity`` saw: the terminal's output, and each line's wait."""

    output: str
    #: Seconds from each line typed to the next prompt (its result printed).
    waited: list[float]


def type_at_terminal(
    argv: Sequence[str],
    lines: Sequence[str],
    *,
    env: Mapping[str, str],
    size: tuple[int, int] = (24, 100),
    timeout: float = 60,
) -> Session:
    """Run ``argv`` on a pseudo-terminal of ``size`` (lines, columns), typing ``lines``.

    Each line is typed at a prompt; then Ctrl-D ends the session.
    """
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    process = subprocess.Popen(
        list(argv), stdin=terminal, stdout=terminal, stderr=terminal, env=dict(env)
    )
    os.close(terminal)
    drawn = b""
    waited: list[float] = []

    def read_until_prompts(count: int) -> None:
        nonlocal drawn
        deadline = time.monotonic() + timeout
        while drawn.count(PROMPT) < count:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([controller], [], [], left)[0]:
                raise AssertionError(f"no prompt in {timeout} s: {drawn.decode(errors='replace')}")
            try:
                drawn += os.read(controller, 65536)
            except OSError:  # EIO: the program ended
                raise AssertionError(drawn.decode(errors="replace")) from None

    try:
        read_until_prompts(1)
        for number, line in enumerate(lines, start=2):
            os.write(controller, line.encode() + b"\n")
            typed = time.perf_counter()
            read_until_prompts(number)
            waited.append(time.perf_counter() - typed)
        os.write(controller, b"\x04")  # Ctrl-D
        while select.select([controller], [], [], timeout)[0]:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(controller)
        process.wait(timeout=timeout)
    return Session(drawn.decode(), waited)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("display") / "lake")
    with trinity_dbapi.connect(uri, autocommit=True) as connection:
        connection.execute("CREATE TABLE t (id INT8, note VARCHAR)")
        connection.execute("INSERT INTO t VALUES (1, NULL), (2, 'NULL'), (3, 'a|b')")
    return uri


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PAGER", "LINES")}
    return {**env, "TERM": "xterm", "TRINITY_HISTORY": os.devnull, **extra}


def test_a_million_rows_print_a_screenful_at_once(lake: str) -> None:
    session = type_at_terminal(
        [sys.executable, "-m", "trinity_dbapi.cli", lake],
        ["SELECT * FROM range(1000000);"],
        env=_env(),
    )
    output = session.output
    assert re.search(r"\n1000000 rows \(19 shown\)\r?\n", output), output
    assert "\n 999999\r\n" in output and "\n      0\r\n" in output and "\n 500000" not in output
    assert "   ·\r\n" in output
    print(f"SELECT * FROM range(1000000): a screenful in {session.waited[0]:.3f} s")


def test_modes_nulls_and_expanded_at_a_terminal(lake: str) -> None:
    session = type_at_terminal(
        [sys.executable, "-m", "trinity_dbapi.cli", lake],
        [
            "SELECT * FROM t ORDER BY id;",
            ".nullvalue ∅",
            ".mode markdown",
            "SELECT * FROM t ORDER BY id;",
            ".mode line",
            "SELECT * FROM t ORDER BY id;",
            ".mode table",
            "\\x",
            "SELECT * FROM t WHERE id = 1;",
        ],
        env=_env(),
    )
    output = session.output.replace("\r\n", "\n")
    assert f"  1 | {DIM}NULL{NORMAL}\n  2 | NULL\n" in output  # NULL dimmed, 'NULL' not
    assert f"|   1 | {DIM}∅{NORMAL}    |\n|   2 | NULL |\n|   3 | a\\|b |\n" in output
    assert "  id = 2\nnote = NULL\n\n  id = 3\nnote = a|b\n" in output
    assert f"-[ RECORD 1 ]-\nid   | 1\nnote | {DIM}∅{NORMAL}\n(1 row)\n" in output


def test_the_pager_at_a_terminal(lake: str, tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    session = type_at_terminal(
        [sys.executable, "-m", "trinity_dbapi.cli", lake],
        [".pager on", "SELECT * FROM range(100);", "SELECT 'done' AS s;"],
        env=_env(PAGER=f"cat > {paged}"),
    )
    lines = paged.read_text().splitlines()
    assert len(lines) == 103 and lines[-2:] == ["    99", "(100 rows)"]  # complete, unstyled
    assert "    50\r\n" not in session.output


def test_explain_at_a_terminal(lake: str) -> None:
    session = type_at_terminal(
        [sys.executable, "-m", "trinity_dbapi.cli", lake],
        ["EXPLAIN SELECT * FROM t;", "EXPLAIN ANALYZE SELECT * FROM t WHERE id > 1;"],
        env=_env(),
    )
    output = session.output.replace("\r\n", "\n")
    assert "\\n" not in output  # no escaped line breaks: the plan's lines
    assert re.search(r"\n│\s+Projections: id, note\s+│\n", output), output
    assert "\n│ Total Time: " in output or "Total Time:" in output
    assert "\ntrinity_storage: requests: " in output


def test_explain_in_a_script(lake: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.cli", lake, "-c", "EXPLAIN SELECT * FROM t"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_env(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("╭─") and "\n│ Projections: id, note" in result.stdout
    assert "explain_value" not in result.stdout and "\\n" not in result.stdout
