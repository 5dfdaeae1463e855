"""Progress bars: :class:`TerminalProgress` and the ``trinity`` shell drawing them on stderr.

The handler is tested drawing into a fake terminal (a StringIO that says it
is a TTY); the shell end to end under a real pseudo-terminal, with stderr on
the terminal and stdout on a pipe, as a person running ``trinity`` in a
terminal and redirecting its output would.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from tests.terminal import run_on_terminal
from trinity_dbapi.cli import Shell
from trinity_dbapi.cli.progress import TerminalProgress
from trinity_dbapi.sql.engine.progress import ProgressEvent


class FakeTerminal(io.StringIO):
    """A text stream that claims to be a terminal."""

    def isatty(self) -> bool:
        return True


class BrokenTerminal(FakeTerminal):
    """A terminal that has gone away: every write fails."""

    def write(self, text: str) -> int:
        raise OSError("the terminal is gone")


def _lines(drawn: str) -> list[str]:
    """What a terminal would keep of ``drawn``: each line as its last carriage return left it."""
    return [line.split("\r")[-1].rstrip() for line in drawn.split("\n")]


def _draw(progress: TerminalProgress, *events: tuple[Any, ...]) -> None:
    for event in events:
        progress(ProgressEvent(*event))


# -- TerminalProgress ----------------------------------------------------------------------


def test_a_bar_per_task_reaching_its_total() -> None:
    terminal = FakeTerminal()
    progress = TerminalProgress(terminal)
    _draw(
        progress,
        ("insert into shop.orders", "rows", 0, 3),
        ("insert into shop.orders", "rows", 3, 3),
        ("commit", "node files", 1, None),
        ("commit", "node files", 4, None),
        ("commit", "node files", 4, 4),
    )
    first, second, rest = _lines(terminal.getvalue())
    assert first.startswith("insert into shop.orders: 100%|")
    assert "| 3/3 [" in first and " rows/s]" in first
    assert second.startswith("commit: 100%|") and "| 4/4 [" in second
    assert rest == ""  # both bars were finished by their final events
    progress.close()  # nothing in progress: nothing more is drawn
    assert _lines(terminal.getvalue())[-1] == ""


def test_a_bar_without_a_total_counts() -> None:
    terminal = FakeTerminal()
    with TerminalProgress(terminal) as progress:
        _draw(
            progress, ("collect garbage", "files", 0, None), ("collect garbage", "files", 2, None)
        )
    # closed by the with block, unfinished: it shows the count in its unit
    (line, rest) = _lines(terminal.getvalue())
    assert line.startswith("collect garbage: 2 files [") and rest == ""


def test_a_count_going_back_is_a_new_task() -> None:
    terminal = FakeTerminal()
    progress = TerminalProgress(terminal)
    _draw(progress, ("commit", "node files", 3, None), ("commit", "node files", 1, None))
    progress.close()
    first, second, _ = _lines(terminal.getvalue())
    assert first.startswith("commit: 3 node files") and second.startswith("commit: 1 node files")


def test_leave_false_erases_finished_bars() -> None:
    terminal = FakeTerminal()
    progress = TerminalProgress(terminal, leave=False)
    _draw(
        progress, ("export snapshot eod", "files", 0, None), ("export snapshot eod", "files", 5, 5)
    )
    drawn = terminal.getvalue()
    assert "export snapshot eod" in drawn
    assert _lines(drawn) == [""]  # what stays on screen: nothing


def test_for_stream_only_on_a_terminal() -> None:
    assert isinstance(TerminalProgress.for_stream(FakeTerminal()), TerminalProgress)
    assert TerminalProgress.for_stream(io.StringIO()) is None
    with open(os.devnull, "w") as closed:
        pass
    assert TerminalProgress.for_stream(closed) is None  # isatty() raises ValueError
    assert TerminalProgress.for_stream(object()) is None  # type: ignore[arg-type]


def test_a_broken_terminal_stops_the_bars_not_the_statement() -> None:
    progress = TerminalProgress(BrokenTerminal())
    _draw(progress, ("insert into t", "rows", 0, 2), ("insert into t", "rows", 2, 2))
    progress.close()


def test_a_connection_draws_through_it(tmp_path: Path) -> None:
    terminal = FakeTerminal()
    with trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True) as conn:
        conn.progress = TerminalProgress.for_stream(terminal)
        conn.execute("CREATE TABLE t (id INT8)")
        conn.execute("INSERT INTO t SELECT * FROM range(1000)")
        conn.execute("CALL system.collect_garbage(dry_run => TRUE)")
    lines = [line for line in _lines(terminal.getvalue()) if line]
    assert lines[0].startswith("insert into default.t: 100%|") and "| 1000/1000 [" in lines[0]
    assert lines[1].startswith("collect garbage (dry run): 0 files")


def test_tqdm_is_imported_only_to_draw() -> None:
    code = (
        "import io, sys\n"
        "from trinity_dbapi.cli.progress import TerminalProgress\n"
        "class T(io.StringIO):\n"
        "    def isatty(self): return True\n"
        "progress = TerminalProgress.for_stream(T())\n"
        "print('tqdm' in sys.modules, end=' ')\n"
        "from trinity_dbapi.sql.engine.progress import ProgressEvent\n"
        "progress(ProgressEvent('t', 'rows', 0, 1))\n"
        "print('tqdm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False True\n"


# -- the shell -----------------------------------------------------------------------------


class RecordingProgress(TerminalProgress):
    """Counts how often the shell finishes its bar."""

    def __init__(self) -> None:
        super().__init__(FakeTerminal())
        self.closed = 0

    def close(self) -> None:
        self.closed += 1
        super().close()


class FailingCursor:
    def execute(self, sql: str, params: object = None) -> None:
        raise trinity_dbapi.ProgrammingError(f"cannot run {sql!r}")


class Connection:
    progress: Any = None

    def cursor(self) -> FailingCursor:
        return FailingCursor()


def test_the_shell_sets_the_handler_and_ends_its_bar_after_each_statement() -> None:
    progress, connection, err = RecordingProgress(), Connection(), io.StringIO()
    shell = Shell(connection, out=io.StringIO(), err=err, progress=progress)
    assert connection.progress is progress
    assert not shell.run_script("SELECT 1")  # fails: the bar ends all the same
    assert progress.closed == 1
    assert err.getvalue() == "Error: cannot run 'SELECT 1'\n"
    assert Shell(Connection(), out=io.StringIO()).progress is None


def test_no_progress_option() -> None:
    from trinity_dbapi.cli import build_parser

    assert build_parser().parse_args(["u"]).no_progress is False
    assert build_parser().parse_args(["u", "--no-progress"]).no_progress is True


def _on_a_terminal(
    *args: str, sized: bool = True, command: tuple[str, ...] = ("-m", "trinity_dbapi.cli")
) -> tuple[int, str, str]:
    """Run ``trinity`` with stderr on a pseudo-terminal; (exit code, stdout, what stderr drew)."""
    return run_on_terminal(
        [sys.executable, *command, *args],
        stream="stderr",
        sized=sized,
        env={**os.environ, "TRINITY_HISTORY": os.devnull},
    )


@pytest.fixture
def lake(tmp_path: Path) -> str:
    uri = str(tmp_path / "lake")
    trinity_dbapi.connect(uri, autocommit=True).execute(
        "CREATE TABLE orders (id INT8 NOT NULL, item VARCHAR)"
    ).connection.close()
    return uri


GC_RESULT = (
    " deleted_files | reachable_files | too_young_files | foreign_files | dry_run\n"
    "---------------+-----------------+-----------------+---------------+---------\n"
)


def test_the_shell_draws_bars_on_a_terminal_stderr(lake: str) -> None:
    code, stdout, drawn = _on_a_terminal(
        lake,
        "-c",
        "INSERT INTO orders SELECT i, 'item' FROM range(50000) AS t(i)",
        "-c",
        "CALL system.collect_garbage()",
    )
    assert code == 0, drawn
    assert stdout.startswith("OK, 50000 rows affected\n" + GC_RESULT)  # results untouched
    assert "insert into default.orders:   0%|" in drawn and "| 0/50000 [" in drawn
    assert "collect garbage: 0 files" in drawn
    assert "Error" not in drawn
    # The shell's bars are erased when done: the terminal is left clean.
    assert [line.split("\r")[-1].strip() for line in drawn.split("\n")] == [""]


def test_no_progress_draws_nothing(lake: str) -> None:
    code, stdout, drawn = _on_a_terminal(
        lake, "--no-progress", "-c", "CALL system.collect_garbage()"
    )
    assert (code, drawn) == (0, "")
    assert stdout.startswith(GC_RESULT)


def test_errors_still_reach_the_terminal(lake: str) -> None:
    code, stdout, drawn = _on_a_terminal(lake, "-c", "INSERT INTO orders VALUES (NULL, 'x')")
    assert (code, stdout) == (1, "")
    assert "Error: " in drawn and "NOT NULL" in drawn
    assert drawn.rstrip().split("\r")[-1].startswith("Error: ")  # not drawn over by a bar


def test_no_bars_when_stderr_is_not_a_terminal(lake: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.cli", lake, "-c", "CALL system.collect_garbage()"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith(GC_RESULT)


def test_bars_on_a_terminal_that_does_not_know_its_size(tmp_path: Path) -> None:
    script = tmp_path / "bars.py"
    script.write_text(
        "import sys\n"
        "from trinity_dbapi.cli.progress import TerminalProgress\n"
        "from trinity_dbapi.sql.engine.progress import ProgressEvent\n"
        "bars = TerminalProgress.for_stream(sys.stderr)\n"
        "bars(ProgressEvent('insert into t', 'rows', 0, 10))\n"
        "bars(ProgressEvent('insert into t', 'rows', 10, 10))\n"
    )
    code, stdout, drawn = _on_a_terminal(sized=False, command=(str(script),))
    assert (code, stdout) == (0, "")
    final = drawn.split("\r\n")[0].split("\r")[-1]
    assert final.startswith("insert into t: 100%|") and final.endswith(" rows/s]")
    assert len(final) == 80  # the fallback width
