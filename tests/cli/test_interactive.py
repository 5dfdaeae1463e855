"""The shell a person meets at a terminal, driven under a real pseudo-terminal.

Completion, the banner, the starting namespace, help aliases, ``\\q``, the
transaction prompt and Ctrl-D in a transaction, ``.timer``, the nearest
command to a typo, history keeping a multi-line statement as one entry, and
the in-memory lakehouse of ``trinity`` without a path. Then what scripts get:
``-f`` errors at the file's line, ``--version``, ``--at-version``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from tests.cli.session import TerminalSession
from trinity_dbapi import __version__
from trinity_dbapi.cli.interactive import HISTORY_LINE_BREAK

PROMPT = r"trinity> $"


@pytest.fixture
def lake(tmp_path: Path) -> str:
    """A lakehouse whose only user namespace is ``shop`` (``default`` does not exist)."""
    uri = str(tmp_path / "lake")
    with trinity_dbapi.connect(uri, autocommit=True) as connection:
        connection.execute("CREATE NAMESPACE shop")
        connection.execute("CREATE TABLE shop.orders (id INT8, item VARCHAR)")
        connection.execute("CREATE TABLE shop.people (id INT8, name VARCHAR)")
        connection.execute("INSERT INTO shop.orders VALUES (1, 'apple'), (2, 'pear')")
    return uri


def _session(*args: str, **options: Any) -> TerminalSession:
    session = TerminalSession(args, **options)
    session.expect(r"trinity\*?> ")
    return session


def test_banner_and_the_only_namespace(lake: str) -> None:
    session = _session(lake)
    assert session.screen.splitlines()[:4] == [
        f"trinity {__version__}",
        f"Connected to {lake}.",
        'Enter ".help" for usage hints, ".quit" or Ctrl-D to leave.',
        "using namespace shop",
    ]
    session.send("SELECT item FROM orders WHERE id = 2;\r")
    assert "\n pear\n(1 row)\n" in session.expect(PROMPT)
    session.send("\x04")
    assert session.close() == 0


def test_several_namespaces_are_named(lake: str) -> None:
    with trinity_dbapi.connect(lake, autocommit=True) as connection:
        connection.execute("CREATE NAMESPACE staff")
    session = _session(lake)
    assert (
        "namespace 'default' does not exist; the namespaces are shop, staff: "
        "USE one, or write namespace.table\n"
    ) in session.screen
    session.send("\\q\r")
    assert session.close() == 0


def test_completion(lake: str) -> None:
    session = _session(lake)
    session.send("SELECT * FROM sh\t")
    session.expect(r"SELECT \* FROM shop\.")  # the namespace
    session.send("or\t")
    session.expect(r"orders ")  # a table: shop.orders
    session.send("WHERE it\t")
    session.expect(r"WHERE item ")  # a column of the table named
    session.send("= 'pear';\r")
    assert " id | item\n" in session.expect(PROMPT)
    session.send(".tim\t\t")  # two commands start so: Tab twice lists them
    listed = session.expect(r"\.timing")
    assert ".timer" in listed
    session.expect(r"trinity> \.tim")  # the line shown again under the list
    session.send("er on\r")
    session.expect(r"er on\ntrinity> $")  # .timer on, run
    session.send("SELECT 1;\r")
    assert "Time: " in session.expect(PROMPT)  # .timer on: the time after each result
    session.send("CALL system.compa\t")
    session.expect(r"system\.compact\(")  # a procedure
    session.send(");\r")
    session.expect(PROMPT)
    session.send("\x04")
    assert session.close() == 0


def test_completion_sees_a_table_created_in_the_session(lake: str) -> None:
    session = _session(lake)
    session.send("SELECT * FROM shop.\t\t")  # Tab twice: the candidates listed
    listed = session.expect(r"shop\.people")
    assert "shop.orders" in listed and "shop.returns" not in listed
    session.send("people;\r")
    session.expect(r"\(0 rows\)\ntrinity> $")
    session.send("CREATE TABLE shop.returns (id INT8);\r")
    session.expect(r"OK\ntrinity> $")
    session.send("SELECT * FROM shop.ret\t")  # the names were read again after CREATE
    session.expect(r"shop\.returns $")
    session.send(";\r")
    session.expect(r"\(0 rows\)\ntrinity> $")
    session.send("\x04")
    assert session.close() == 0


@pytest.mark.parametrize("word", ["help", "\\?", ".help", "help;"])
def test_help_aliases(lake: str, word: str) -> None:
    session = _session(lake)
    session.send(f"{word}\r")
    shown = session.expect(PROMPT)
    assert ".schema [TABLE]" in shown and ".timer on|off" in shown
    assert "->" not in shown  # no continuation prompt: it was a command
    session.send("quit\r")
    assert session.close() == 0


@pytest.mark.parametrize("word", ["\\q", "exit", "quit;", ".quit"])
def test_leaving(lake: str, word: str) -> None:
    session = _session(lake)
    session.send(f"{word}\r")
    assert session.close() == 0
    assert "->" not in session.screen


def test_psql_describe_and_unknown_command(lake: str) -> None:
    session = _session(lake)
    session.send("\\dt\r")
    assert "orders" in session.expect(PROMPT)
    session.send("\\d orders\r")
    assert " column_name | data_type |" in session.expect(PROMPT)
    session.send(".tabels\r")
    assert "Error: unknown command .tabels; did you mean .tables?" in session.expect(PROMPT)
    session.send(".schema orders\r")
    assert 'CREATE TABLE "shop"."orders" ("id" INT8, "item" VARCHAR);' in session.expect(PROMPT)
    session.send("\x04")
    assert session.close() == 0


def test_transaction_prompt_and_ctrl_d_rolls_back(lake: str) -> None:
    session = _session(lake)
    session.send("BEGIN;\r")
    session.expect(r"trinity\*> $")
    session.send("INSERT INTO orders VALUES (3, 'fig');\r")
    session.expect(r"trinity\*> $")
    session.send("SELECT count(*) AS n FROM orders;\r")
    assert "\n 3\n" in session.expect(r"trinity\*> $")
    session.send("\x04")
    assert session.close() == 0
    assert session.screen.endswith(
        "rolled back the open transaction: end it with COMMIT to keep its changes\n"
    )
    with trinity_dbapi.connect(lake) as connection:
        assert connection.execute("SELECT count(*) FROM shop.orders").fetchall() == [(2,)]


def test_history_keeps_a_statement_as_one_entry(lake: str, tmp_path: Path) -> None:
    history = tmp_path / "history"
    session = _session(lake, env={"TRINITY_HISTORY": str(history)})
    session.send("SELECT id\r")
    session.expect(r"-> $")
    session.send("FROM orders\r")
    session.expect(r"-> $")
    session.send("WHERE id = 1;\r")
    session.expect(PROMPT)
    session.send("SELECT 2 AS two;\r")
    session.expect(PROMPT)
    session.send("\x1b[A\x1b[A")  # up twice: the three-line statement, whole
    session.expect(r"WHERE id = 1;")
    session.send("\r")
    assert "\n  1\n(1 row)\n" in session.expect(PROMPT)  # run again as one statement
    session.send("\x04")
    assert session.close() == 0
    joined = "SELECT id\nFROM orders\nWHERE id = 1;".replace("\n", HISTORY_LINE_BREAK)
    assert history.read_text().splitlines()[-3:] == [joined, "SELECT 2 AS two;", joined]


def test_no_path_opens_an_in_memory_lakehouse() -> None:
    session = _session()
    assert (
        f"Connected to a transient in-memory lakehouse (memory://trinity-{session.process.pid}): "
        'it is gone when the shell ends; ".open URI" opens one that persists.'
    ) in session.screen
    session.send("CREATE TABLE t (x INT8);\r")
    session.expect(PROMPT)
    session.send("INSERT INTO t VALUES (7);\r")
    session.expect(PROMPT)
    session.send("SELECT x FROM t;\r")
    assert "\n 7\n(1 row)\n" in session.expect(PROMPT)
    session.send("\x04")
    assert session.close() == 0


def test_open_another_lakehouse(lake: str) -> None:
    session = _session()
    session.send(f".open {lake}\r")
    assert f"connected to {lake}" in session.expect(PROMPT)
    session.send("SELECT count(*) AS n FROM shop.orders;\r")
    assert "\n 2\n" in session.expect(PROMPT)
    session.send("\x04")
    assert session.close() == 0


# --- scripts -----------------------------------------------------------------------


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.cli", *args],
        check=False,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TRINITY_HISTORY": os.devnull},
    )


def test_file_errors_give_the_file_line(lake: str, tmp_path: Path) -> None:
    script = tmp_path / "setup.sql"
    script.write_text("-- setup\nSELECT 1;\n\nSELECT 2; SELECT\n  1 +* 2;\nSELECT 3;\n")
    result = _run(lake, "-f", str(script))
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"Error: {script}:5: SQL syntax error at line 5, column 8 near '2':"
    )
    script.write_text("SELECT 1;\n\n  SHOW ALL TABLES;\n")
    result = _run(lake, "-f", str(script))
    assert result.stderr.startswith(
        f"Error: {script}:3: SHOW ALL is not supported (line 3, column 8):"
    )
    # An error without a position: the line where the statement starts.
    result = _run(lake, "-f", "-", stdin="SELECT 1;\n-- next\n  SELECT *\n  FROM nope;\n")
    assert result.stderr.startswith("Error: stdin:3: ")
    assert "nope" in result.stderr


def test_command_errors_are_not_placed(lake: str) -> None:
    result = _run(lake, "-c", "SELECT 1;\nSELECT * FROM nope")
    assert result.returncode == 1 and result.stderr.startswith("Error: ")
    assert ":2:" not in result.stderr


def test_version_prints_the_program_version() -> None:
    result = _run("--version")
    assert (result.returncode, result.stdout, result.stderr) == (0, f"trinity {__version__}\n", "")


def test_at_version_and_its_old_spelling(lake: str) -> None:
    result = _run(lake, "--at-version", "0", "-c", "SHOW NAMESPACES")
    assert (result.returncode, result.stderr) == (0, "")
    assert "shop" not in result.stdout  # version 0: before CREATE NAMESPACE shop
    result = _run(lake, "--version", "0", "-c", "SHOW NAMESPACES")
    assert result.returncode == 0 and "shop" not in result.stdout
    assert result.stderr == (
        "trinity: note: --version 0 is deprecated; write --at-version 0 "
        "(--version alone prints the program's version)\n"
    )
    result = _run(lake, "--at-version", "x")
    assert result.returncode == 2 and "--at-version takes a lakehouse version number" in (
        result.stderr
    )


def test_no_path_with_a_command_uses_memory() -> None:
    result = _run("-c", "CREATE TABLE t (x INT8); INSERT INTO t VALUES (1); SELECT x FROM t")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "OK\nOK, 1 row affected\n x\n---\n 1\n(1 row)\n"


def test_a_new_lakehouse_is_announced_once(tmp_path: Path) -> None:
    path = tmp_path / "new-lake"
    session = _session(str(path))
    session.send("SHOW NAMESPACES;\r")
    session.expect(PROMPT)
    assert not path.exists()  # reading creates nothing
    session.send("CREATE NAMESPACE shop;\r")
    assert f"created a new lakehouse at {path}\n" in session.expect(PROMPT)
    session.send("CREATE TABLE shop.t (x INT8);\r")
    assert "created a new lakehouse" not in session.expect(PROMPT)
    session.send("\x04")
    assert session.close() == 0
    assert path.is_dir()


def test_a_mistyped_path_leaves_nothing_behind(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "typo"), "-c", "SELECT * FROM shop.orders")
    assert result.returncode == 1
    assert not (tmp_path / "typo").exists()
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    result = _run(str(folder), "-c", "CREATE TABLE t (x INT8)")
    assert result.returncode == 1
    assert "the folder is not empty" in result.stderr
    assert result.stderr.endswith(f" (with trinity: trinity --create {folder})\n")
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    result = _run(str(folder), "--create", "-c", "CREATE TABLE t (x INT8)")
    assert (result.returncode, result.stderr) == (0, "")
    assert len(list(folder.iterdir())) > 1


def test_a_script_ending_in_a_transaction_is_rolled_back(lake: str) -> None:
    result = _run(lake, "-c", "BEGIN; INSERT INTO shop.orders VALUES (3, 'fig')")
    assert result.returncode == 0
    assert result.stderr == (
        "rolled back the open transaction: end it with COMMIT to keep its changes\n"
    )
    result = _run(lake, "-c", "SELECT count(*) AS n FROM shop.orders")
    assert result.stdout == " n\n---\n 2\n(1 row)\n"


def test_history_comes_back_in_the_next_session(lake: str, tmp_path: Path) -> None:
    history = tmp_path / "history"
    joined = "SELECT id\nFROM orders\nWHERE id = 2;"
    history.write_text(joined.replace("\n", HISTORY_LINE_BREAK) + "\n")
    session = _session(lake, env={"TRINITY_HISTORY": str(history)})
    session.send("\x1b[A")  # up: the last session's statement, with its line breaks
    session.expect(r"WHERE id = 2;")
    session.send("\r")
    assert "\n  2\n(1 row)\n" in session.expect(PROMPT)
    session.send("\x04")
    assert session.close() == 0
    # Run again as it was: not a second entry (readline skips a repeat of the last one).
    assert history.read_text().splitlines() == [joined.replace("\n", HISTORY_LINE_BREAK)]


def test_the_banner_of_an_old_version(lake: str) -> None:
    session = _session(lake, "--at-version", "2")
    assert f"Connected to {lake} at version 2 (read-only).\n" in session.screen
    session.send("\x04")
    assert session.close() == 0
