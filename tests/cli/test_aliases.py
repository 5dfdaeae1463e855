"""Other shells' habits: psql's backslash commands, bare ``help``/``quit``/``exit``, typos.

The spelling rules (:mod:`trinity_dbapi.cli.aliases`), then the shell running
them on an in-memory lakehouse: ``.schema``, ``.timer``, ``.open``, the
transaction prompt and a transaction left open.
"""

from __future__ import annotations

import io
import os
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.cli import META_COMMANDS, PROMPT, TRANSACTION_PROMPT, Shell
from trinity_dbapi.cli.aliases import edit_distance, is_command, nearest, translate

NAMES = [name for name, _, _ in META_COMMANDS]


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("help", ".help"),
        ("HELP;", ".help"),
        ("quit", ".quit"),
        ("exit ;", ".quit"),
        ("\\q", ".quit"),
        ("\\?", ".help"),
        ("\\dt", ".tables"),
        ("\\d", ".tables"),
        ("\\d shop.orders", "DESCRIBE shop.orders"),
        ("\\d shop.orders;", "DESCRIBE shop.orders"),
        ("\\dn", "SHOW NAMESPACES"),
        ("\\timing on", ".timer on"),
        ("\\c memory://other", ".open memory://other"),
        ("\\mode csv", ".mode csv"),  # any dot-command has its backslash spelling
        ("\\nosuch", "\\nosuch"),  # unknown: left for the shell to report
        (".tables", ".tables"),
    ],
)
def test_translate(line: str, command: str) -> None:
    assert is_command(line)
    assert translate(line, NAMES) == command


@pytest.mark.parametrize("line", ["help me", "SELECT 1", "quit_table", "exit_code;", "  "])
def test_sql_is_not_a_command(line: str) -> None:
    assert not is_command(line)


def test_edit_distance() -> None:
    assert edit_distance("tabels", "tables") == 1  # a swap of neighbours
    assert edit_distance("scheme", "schema") == 1
    assert edit_distance("", "abc") == 3
    assert edit_distance("timng", "timing") == 1
    assert edit_distance("abc", "abc") == 0


def test_nearest() -> None:
    commands = [f".{name}" for name in NAMES]
    assert nearest(".tabels", commands) == ".tables"
    assert nearest(".scheme", commands) == ".schema"
    assert nearest(".tab", commands) == ".tables"  # starts only one command
    assert nearest(".x", commands) is None  # too short to guess
    assert nearest(".frobnicate", commands) is None


# --- the shell on a lakehouse ----------------------------------------------------


def _shell(**options: Any) -> tuple[Shell, io.StringIO, io.StringIO]:
    connection = trinity_dbapi.connect(f"memory://aliases-{os.urandom(4).hex()}", autocommit=True)
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(connection, out=out, err=err, **options)
    for statement in (
        "CREATE NAMESPACE shop",
        "CREATE TABLE shop.orders (id INT8 NOT NULL, item VARCHAR)",
        "CREATE TABLE shop.people (id INT8, name VARCHAR)",
    ):
        shell.connection.execute(statement)
    return shell, out, err


def _lines(lines: list[str], prompts: list[str]) -> Any:
    feed = iter(lines)

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        line = next(feed, None)
        if line is None:
            raise EOFError
        return line

    return read_line


def test_unknown_command_suggests_the_nearest() -> None:
    shell, _, err = _shell()
    assert shell.meta(".tabels")
    assert err.getvalue() == "Error: unknown command .tabels; did you mean .tables?\n"
    shell.meta(".frobnicate")
    assert err.getvalue().endswith("Error: unknown command .frobnicate; type .help for the list\n")
    shell.meta("\\dtt")
    assert err.getvalue().endswith("Error: unknown command \\dtt; did you mean \\dt?\n")


def test_backslash_d_describes_and_bare_words_leave() -> None:
    shell, out, err = _shell()
    prompts: list[str] = []
    assert shell.interact(_lines(["\\d shop.orders", "\\dn", "quit", "SELECT 1;"], prompts))
    assert err.getvalue() == ""
    text = out.getvalue()
    assert " column_name | data_type |" in text and "\n id          | int8      |" in text
    assert " namespace_name\n" in text and "\n shop\n" in text
    assert " 1\n---" not in text  # quit left before SELECT 1
    assert prompts == [PROMPT] * 3


def test_help_lists_the_new_commands() -> None:
    shell, out, _ = _shell()
    shell.interact(_lines(["\\?"], []))
    assert ".schema [TABLE]" in out.getvalue() and ".timer on|off" in out.getvalue()
    assert ".open URI" in out.getvalue()


def test_schema_of_one_table_and_of_all() -> None:
    shell, out, err = _shell()
    shell.meta(".schema shop.orders")
    assert out.getvalue() == 'CREATE TABLE "shop"."orders" ("id" INT8 NOT NULL, "item" VARCHAR);\n'
    out.truncate(0), out.seek(0)
    shell.meta(".schema")
    assert out.getvalue() == (
        'CREATE TABLE "shop"."orders" ("id" INT8 NOT NULL, "item" VARCHAR);\n'
        'CREATE TABLE "shop"."people" ("id" INT8, "name" VARCHAR);\n'
    )
    shell.meta(".schema shop.nope")
    assert "Error: " in err.getvalue() and "shop.nope" in err.getvalue()


def test_timer_is_timing() -> None:
    shell, _, err = _shell()
    shell.meta(".timer on")
    assert shell.timing
    shell.execute("SELECT 1")
    assert err.getvalue().startswith("Time: ") and " ms" in err.getvalue()
    shell.meta(".timer off")
    assert not shell.timing
    shell.meta(".timer maybe")
    assert err.getvalue().endswith("Error: usage: .timer on|off\n")


def test_transaction_prompt_and_rollback_when_leaving() -> None:
    shell, _, err = _shell()
    prompts: list[str] = []
    lines = ["BEGIN;", "INSERT INTO shop.orders", "VALUES (1, 'a');", "COMMIT;", "BEGIN;"]
    lines += ["INSERT INTO shop.orders VALUES (2, 'b');"]
    assert shell.interact(_lines(lines, prompts))
    assert prompts[:5] == [PROMPT, TRANSACTION_PROMPT, "     -> ", TRANSACTION_PROMPT, PROMPT]
    assert prompts[5:] == [TRANSACTION_PROMPT, TRANSACTION_PROMPT]  # the last one met EOF
    shell.finish()  # what the program does when the input ends (Ctrl-D)
    assert err.getvalue() == (
        "rolled back the open transaction: end it with COMMIT to keep its changes\n"
    )
    rows = shell.connection.execute("SELECT id FROM shop.orders").fetchall()
    assert rows == [(1,)]  # the committed row only
    shell.finish()  # nothing open: nothing said
    assert err.getvalue().count("rolled back") == 1


def test_open_switches_lakehouse_and_keeps_the_old_one_on_failure() -> None:
    opened: list[str] = []

    def connect(uri: str) -> Any:
        opened.append(uri)
        return trinity_dbapi.connect(uri, autocommit=True, create=uri.startswith("memory://"))

    shell, out, err = _shell(connect=connect)
    old = shell.connection
    shell.meta(".open /nonexistent/lake")
    assert shell.connection is old and "Error: " in err.getvalue()
    uri = f"memory://aliases-open-{os.urandom(4).hex()}"
    shell.meta(f"\\c {uri}")
    assert shell.connection is not old and old.closed
    assert out.getvalue() == f"connected to {uri}\n"
    assert shell.connection.execute("SHOW NAMESPACES").fetchall() == [
        ("information_schema",),
        ("system",),
    ]
    shell.connection.close()


def test_open_without_a_connector() -> None:
    shell, _, err = _shell()
    shell.meta(".open memory://x")
    assert "Error: .open is not available here" in err.getvalue()
