"""The shell on branches: ``--branch``, the prompt and banner, completion of branch and tag names."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from tests.cli.session import TerminalSession
from trinity_dbapi.cli import PROMPT, TRANSACTION_PROMPT, Shell
from trinity_dbapi.cli.completion import Catalog, complete


@pytest.fixture
def lake(tmp_path: Path) -> str:
    """Main: shop.orders (one row). Branch dev: two rows, shop.draft. Tag eod."""
    uri = str(tmp_path / "lake")
    with trinity_dbapi.connect(uri, autocommit=True) as connection:
        connection.execute("CREATE NAMESPACE shop")
        connection.execute("CREATE TABLE shop.orders (id INT8)")
        connection.execute("INSERT INTO shop.orders VALUES (1)")
        connection.execute("CREATE TAG eod")
        connection.execute("CREATE BRANCH dev")
        connection.execute('CREATE BRANCH "Hot-Fix"')
        connection.execute("USE BRANCH dev")
        connection.execute("INSERT INTO shop.orders VALUES (2)")
        connection.execute("CREATE TABLE shop.draft (x INT8)")
    return uri


# --- completion ----------------------------------------------------------------------

BRANCHES = ['"Hot-Fix" ', "dev ", "main "]


@pytest.mark.parametrize(
    ("before", "word", "expected"),
    [
        ("USE BRANCH ", "", BRANCHES),
        ("USE BRANCH ", "d", ["dev "]),
        ("use branch ", "H", ['"Hot-Fix" ']),
        ("MERGE BRANCH ", "", BRANCHES),
        ("MERGE BRANCH dev INTO ", "m", ["main "]),  # a branch, not a table
        ("DROP BRANCH ", "", BRANCHES),
        ("DROP BRANCH IF EXISTS ", "de", ["dev "]),
        ("CREATE BRANCH x FROM BRANCH ", "", BRANCHES),
        ("CREATE BRANCH x FROM TAG ", "", ["eod "]),
        ("DROP TAG ", "e", ["eod "]),
        ("DROP TAG IF EXISTS ", "", ["eod "]),
        ("CREATE BRANCH x FROM ", "", ["BRANCH ", "TAG ", "VERSION "]),
        ("create tag t from ", "", ["BRANCH ", "VERSION "]),
        ("create tag t from ", "b", ["branch "]),
        ("SHOW ", "BR", ["BRANCH ", "BRANCHES "]),  # keywords, not by context
        ("SHOW ", "tags", ["tags "]),
        ("", "mer", ["merge "]),
        ("MERGE ", "br", ["branch ", "branches "]),
        ("CREATE ", "TAG", ["TAG ", "TAGS "]),
        ("USE ", "BRA", ["BRANCH ", "BRANCHES "]),
    ],
)
def test_branch_and_tag_names_complete(
    lake: str, before: str, word: str, expected: list[str]
) -> None:
    with trinity_dbapi.connect(lake, autocommit=True) as connection:
        catalog = Catalog(lambda: (connection, 0))
        found = complete(word, before, catalog=catalog, current="shop")
    assert found == sorted(expected)


def test_names_follow_the_branch_and_refs_are_read_once_per_epoch(lake: str) -> None:
    with trinity_dbapi.connect(lake, autocommit=True) as connection:
        epoch = [0]
        catalog = Catalog(lambda: (connection, epoch[0]))
        assert catalog.tables("shop") == ["orders"]
        assert catalog.refs("BRANCHES") == ["Hot-Fix", "dev", "main"]
        connection.execute("CREATE BRANCH later")
        assert "later" not in catalog.refs("BRANCHES")  # same epoch: cached
        connection.execute("USE BRANCH dev")
        epoch[0] += 1  # what the shell does after USE BRANCH
        assert catalog.tables("shop") == ["draft", "orders"]
        assert "later" in catalog.refs("BRANCHES")


# --- the prompt and the catalog epoch ------------------------------------------------------


def test_the_prompt_names_the_branch(lake: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    with trinity_dbapi.connect(lake, autocommit=True) as connection:
        shell = Shell(connection, out=out, err=err)
        assert (shell.prompt(), shell.branch) == (PROMPT, None)
        epoch = shell.catalog_epoch
        assert shell.execute("USE BRANCH dev")
        assert shell.catalog_epoch == epoch + 1  # its tables are other names
        assert (shell.prompt(), shell.branch) == ("trinity(dev)> ", "dev")
        assert shell.execute("BEGIN")
        assert shell.prompt() == "trinity(dev)*> "
        assert shell.execute("ROLLBACK")
        assert shell.execute("USE BRANCH main")
        assert shell.prompt() == PROMPT
        assert shell.execute("BEGIN") and shell.prompt() == TRANSACTION_PROMPT
        epoch = shell.catalog_epoch
        assert shell.execute("  merge branch dev into main")
        assert shell.catalog_epoch == epoch + 1
    assert err.getvalue() == ""


# --- the command line ----------------------------------------------------------------------


def _run(*args: str) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TRINITY_HISTORY": os.devnull},
    )


def test_branch_option_opens_the_branch(lake: str) -> None:
    sql = "SELECT count(*) AS n FROM shop.orders"
    on_dev = _run(
        lake, "--branch", "dev", "--format", "csv", "-c", sql, "-c", "SHOW TABLES IN shop"
    )
    assert (on_dev.returncode, on_dev.stdout, on_dev.stderr) == (
        0,
        "n\n2\ntable_name\ndraft\norders\n",
        "",
    )
    on_main = _run(lake, "--branch", "main", "--format", "csv", "-c", sql)
    assert (on_main.returncode, on_main.stdout) == (0, "n\n1\n")
    written = _run(lake, "--branch", "dev", "-c", "INSERT INTO shop.orders VALUES (3)")
    assert written.returncode == 0
    with trinity_dbapi.connect(lake) as connection:
        assert connection.execute(sql).fetchall() == [(1,)]  # main unchanged


def test_an_unknown_branch_names_it_and_how_to_list_branches(lake: str) -> None:
    result = _run(lake, "--branch", "nope", "-c", "SELECT 1")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        "Error: branch 'nope' does not exist; SHOW BRANCHES lists them "
        "(or SELECT * FROM system.refs)\n"
    )


def test_banner_and_prompt_at_a_terminal(lake: str) -> None:
    session = TerminalSession([lake, "--branch", "dev"])
    session.expect(r"trinity\(dev\)> ")
    assert f"Connected to {lake} on branch dev.\n" in session.screen
    session.send("USE BRANCH main;\r")
    session.expect(r"\ntrinity> $")
    session.send("\x04")
    assert session.close() == 0
