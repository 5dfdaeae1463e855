"""The ``trinity`` command-line shell.

The first part tests the pure pieces (statement splitting, value rendering,
the three output formats, option parsing) and the :class:`Shell` over a fake
connection: none of it needs the driver. The second part runs the real
command in subprocesses against lakehouses in temporary folders.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from trinity_dbapi import ProgrammingError, __version__
from trinity_dbapi.cli import (
    CONTINUATION_PROMPT,
    PROMPT,
    Shell,
    build_parser,
    format_csv,
    format_json,
    format_status,
    format_table,
    is_complete,
    iso_duration,
    json_safe,
    main,
    split_statements,
    storage_options,
    text,
)

# --- statement splitting ----------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "statements"),
    [
        ("SELECT 1", ["SELECT 1"]),
        ("SELECT 1;", ["SELECT 1"]),
        ("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
        ("SELECT 1;\n\nSELECT 2", ["SELECT 1", "SELECT 2"]),
        ("SELECT 'a;b'; SELECT 2", ["SELECT 'a;b'", "SELECT 2"]),
        ("SELECT 'it''s;'", ["SELECT 'it''s;'"]),
        ('SELECT 1 AS "x;y"; SELECT 2', ['SELECT 1 AS "x;y"', "SELECT 2"]),
        ("SELECT 1 -- c;d\n; SELECT 2", ["SELECT 1 -- c;d", "SELECT 2"]),
        ("SELECT /* a;b */ 1; SELECT 2", ["SELECT /* a;b */ 1", "SELECT 2"]),
        ("SELECT $$a;b$$; SELECT 2", ["SELECT $$a;b$$", "SELECT 2"]),
        (";; SELECT 1;;", ["SELECT 1"]),
        ("SELECT 1; -- the end", ["SELECT 1"]),
        ("-- only a comment\n", []),
        ("", []),
        ("SELECT\n  1\n  ;", ["SELECT\n  1"]),
        ("SELECT 'é😀;' x; SELECT 2", ["SELECT 'é😀;' x", "SELECT 2"]),
    ],
)
def test_split_statements(sql: str, statements: list[str]) -> None:
    assert split_statements(sql) == statements


def test_split_statements_unterminated() -> None:
    from sqlglot.errors import TokenError

    with pytest.raises(TokenError):
        split_statements("SELECT 'abc")


@pytest.mark.parametrize(
    ("sql", "complete"),
    [
        ("SELECT 1;", True),
        ("SELECT 1", False),
        ("SELECT 1; SELECT", False),
        ("SELECT 'a;", False),
        ("SELECT 'a;';", True),
        ("SELECT /* ; ", False),
        ("SELECT 1 -- ;", False),
        ('SELECT "a;', False),
        ("SELECT $$ ; ", False),
        ("SELECT 1; -- done", True),
        ("", True),
        ("-- a comment", True),
    ],
)
def test_is_complete(sql: str, complete: bool) -> None:
    assert is_complete(sql) is complete


# --- values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ((0, 0, 0), "PT0S"),
        ((1, 2, 0), "P1M2D"),
        ((0, 0, 3_600_000_000_000), "PT1H"),
        ((0, 0, 3_723_500_000_000), "PT1H2M3.5S"),
        ((0, 0, 1), "PT0.000000001S"),
        ((14, 0, -90_000_000_000), "P14MT-1M-30S"),
    ],
)
def test_iso_duration(parts: tuple[int, int, int], expected: str) -> None:
    assert iso_duration(*parts) == expected


def test_json_safe() -> None:
    value = {
        "int": 2**70,
        "dec": decimal.Decimal("1.20"),
        "nan": float("nan"),
        "inf": float("inf"),
        "ninf": float("-inf"),
        "f": 1.5,
        "date": datetime.date(2024, 2, 29),
        "ts": datetime.datetime(2024, 2, 29, 12, 0, 1, 5, tzinfo=datetime.timezone.utc),
        "time": datetime.time(1, 2, 3),
        "td": datetime.timedelta(days=1, hours=2),
        "neg": datetime.timedelta(seconds=-1),
        "bytes": b"\x00\xff",
        "uuid": uuid.UUID(int=1),
        "nested": [(1, b"a"), {2: None}],
    }
    assert json_safe(value) == {
        "int": 2**70,
        "dec": "1.20",
        "nan": "NaN",
        "inf": "Infinity",
        "ninf": "-Infinity",
        "f": 1.5,
        "date": "2024-02-29",
        "ts": "2024-02-29T12:00:01.000005+00:00",
        "time": "01:02:03",
        "td": "P1DT2H",
        "neg": "PT-1S",
        "bytes": "AP8=",
        "uuid": "00000000-0000-0000-0000-000000000001",
        "nested": [[1, "YQ=="], {"2": None}],
    }
    json.dumps(json_safe(value), allow_nan=False)


def test_json_safe_month_day_nano() -> None:
    pa = pytest.importorskip("pyarrow")
    interval = pa.array([(1, 2, 3_000_000_000)], pa.month_day_nano_interval()).to_pylist()[0]
    assert json_safe(interval) == "P1M2DT3S"
    assert text(interval) == "P1M2DT3S"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "NULL"),
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (1.5, "1.5"),
        (decimal.Decimal("2.50"), "2.50"),
        ("x", "x"),
        (b"ab", "\\x6162"),
        (datetime.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
        (datetime.timedelta(minutes=90), "PT1H30M"),
        ([1, None, "a"], '[1, null, "a"]'),
        ({"k": [1.5]}, '{"k": [1.5]}'),
    ],
)
def test_text(value: object, expected: str) -> None:
    assert text(value) == expected


# --- output formats ---------------------------------------------------------------

COLUMNS = ["id", "name", "price", "ok"]
ROWS = [
    (1, "apple", decimal.Decimal("1.50"), True),
    (22, None, decimal.Decimal("10.00"), False),
    (333, "cherry, red", None, None),
]


def test_format_table() -> None:
    assert format_table(COLUMNS, ROWS) == (
        "  id | name        | price | ok\n"
        "-----+-------------+-------+-------\n"
        "   1 | apple       |  1.50 | true\n"
        "  22 | NULL        | 10.00 | false\n"
        " 333 | cherry, red |  NULL | NULL\n"
        "(3 rows)"
    )


def test_format_table_edge_cases() -> None:
    assert format_table(["a"], [(1,)]) == " a\n---\n 1\n(1 row)"
    assert format_table(["name"], []) == " name\n------\n(0 rows)"
    assert format_table(["n"], [(None,), (None,)]) == " n\n------\n NULL\n NULL\n(2 rows)"
    assert format_table(["a", "b"], [("x\ny", "\t")]) == (
        " a    | b\n------+----\n x\\ny | \\t\n(1 row)"
    )
    # wide characters take two columns
    assert format_table(["w", "n"], [("日本", 1), ("ab", 22)]) == (
        " w    |  n\n------+----\n 日本 |  1\n ab   | 22\n(2 rows)"
    )


def test_format_csv() -> None:
    assert format_csv(COLUMNS, ROWS) == (
        'id,name,price,ok\n1,apple,1.50,true\n22,,10.00,false\n333,"cherry, red",,\n'
    ).rstrip("\n")
    assert format_csv(["a", "b,c"], [("", 'say "hi"'), (b"\x00", "l1\nl2")]) == (
        'a,"b,c"\n"","say ""hi"""\nAA==,"l1\nl2"'
    )
    assert format_csv(["a"], []) == "a"


def test_format_json() -> None:
    assert format_json(COLUMNS, ROWS) == (
        '[{"id": 1, "name": "apple", "price": "1.50", "ok": true}, '
        '{"id": 22, "name": null, "price": "10.00", "ok": false}, '
        '{"id": 333, "name": "cherry, red", "price": null, "ok": null}]'
    )
    assert format_json(["a"], []) == "[]"
    assert format_json(["a", "a", "a_2"], [(1, 2, 3)]) == '[{"a": 1, "a_2": 2, "a_2_2": 3}]'
    assert format_json(["é"], [("ü",)]) == '[{"é": "ü"}]'


def test_format_status() -> None:
    assert format_status(-1) == "OK"
    assert format_status(1) == "OK, 1 row affected"
    assert format_status(3) == "OK, 3 rows affected"


# --- options ----------------------------------------------------------------------


def _parse(*argv: str) -> Any:
    return build_parser().parse_args(argv)


def test_options_defaults() -> None:
    args = _parse("/tmp/lake")
    assert (args.uri, args.scripts, args.format, args.timing) == ("/tmp/lake", None, "table", False)
    assert (args.no_create, args.storage_options, args.namespace, args.read_only) == (
        False,
        [],
        None,
        False,
    )


def test_scripts_keep_command_line_order() -> None:
    args = _parse("u", "-c", "SELECT 1", "-f", "a.sql", "--command", "SELECT 2", "--file", "-")
    assert args.scripts == [
        ("sql", "SELECT 1"),
        ("file", "a.sql"),
        ("sql", "SELECT 2"),
        ("file", "-"),
    ]


def test_storage_options() -> None:
    args = _parse(
        "s3://b/l",
        "--storage-option",
        "key=abc",
        "--storage-option",
        "anon=false",
        "--storage-option",
        "client_kwargs.endpoint_url=http://h:9000/?a=b",
        "--storage-option",
        "client_kwargs.region_name=eu",
    )
    assert storage_options(args.storage_options) == {
        "key": "abc",
        "anon": False,
        "client_kwargs": {"endpoint_url": "http://h:9000/?a=b", "region_name": "eu"},
    }
    with pytest.raises(ValueError, match="both a value and nested"):
        storage_options([(["a"], "1"), (["a", "b"], "2")])


@pytest.mark.parametrize(
    "argv",
    [
        ["u", "--format", "xml"],
        ["u", "--storage-option", "novalue"],
        ["u", "--storage-option", "=v"],
        ["u", "--storage-option", "a..b=v"],
        ["u", "--bogus"],
        ["u", "-c"],
        ["u", "-f", "/nonexistent/file.sql"],
        ["u", "--storage-option", "a=1", "--storage-option", "a.b=2"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: trinity" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"trinity {__version__}\n"


def test_import_is_light() -> None:
    code = (
        "import sys, trinity_dbapi.cli; "
        "print(sorted(m for m in ('pyarrow', 'sqlglot', 'duckdb', 'trinity_dbapi.dbapi', "
        "'trinity_dbapi.lakehouse') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the shell over a fake connection ---------------------------------------------


class FakeCursor:
    """Answers a few fixed statements; anything else is a ProgrammingError."""

    RESULTS: ClassVar[dict[str, tuple[list[str] | None, list[tuple[Any, ...]], int]]] = {
        "SELECT 1": (["1"], [(1,)], -1),
        "SELECT 'a;b' AS s": (["s"], [("a;b",)], -1),
        "SHOW TABLES": (["namespace", "name"], [("sales", "orders")], -1),
        "CREATE NAMESPACE x": (None, [], -1),
        "INSERT": (None, [], 2),
    }

    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.description: list[tuple[Any, ...]] | None = None
        self.rowcount = -1
        self._rows: list[tuple[Any, ...]] = []

    def execute(self, sql: str, params: object = None) -> None:
        self.log.append(sql)
        key = " ".join(sql.split())
        if key not in self.RESULTS:
            raise ProgrammingError(f"cannot run {sql!r}")
        columns, self._rows, self.rowcount = self.RESULTS[key]
        self.description = (
            None if columns is None else [(c, "X", None, None, None, None, True) for c in columns]
        )

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows


class FakeConnection:
    def __init__(self) -> None:
        self.log: list[str] = []

    def cursor(self) -> FakeCursor:
        return FakeCursor(self.log)


def _shell(**options: Any) -> tuple[Shell, FakeConnection, io.StringIO, io.StringIO]:
    connection, out, err = FakeConnection(), io.StringIO(), io.StringIO()
    return Shell(connection, out=out, err=err, **options), connection, out, err


def _reader(lines: list[str], prompts: list[str]) -> Any:
    feed: Iterator[str] = iter(lines)

    def read_line(prompt: str) -> str:
        prompts.append(prompt)
        line = next(feed, None)
        if line is None:
            raise EOFError
        if line == "^C":
            raise KeyboardInterrupt
        return line

    return read_line


def test_shell_runs_script_and_stops_at_first_error() -> None:
    shell, connection, out, err = _shell()
    assert not shell.run_script("SELECT 1; SELECT nope; SELECT 1")
    assert connection.log == ["SELECT 1", "SELECT nope"]
    assert out.getvalue() == " 1\n---\n 1\n(1 row)\n"
    assert err.getvalue() == "Error: cannot run 'SELECT nope'\n"


def test_shell_statuses_and_modes() -> None:
    shell, _, out, _ = _shell()
    assert shell.run_script("CREATE NAMESPACE x; INSERT")
    assert out.getvalue() == "OK\nOK, 2 rows affected\n"
    shell, _, out, _ = _shell(mode="csv")
    assert shell.run_script("CREATE NAMESPACE x; SELECT 1")
    assert out.getvalue() == "1\n1\n"


def test_shell_unterminated_string() -> None:
    shell, connection, _, err = _shell()
    assert not shell.run_script("SELECT 1; SELECT 'abc")
    assert connection.log == []
    assert err.getvalue().startswith("Error: unterminated string, quoted name or comment")


def test_interact_prompts_and_multi_line_statements() -> None:
    shell, connection, out, err = _shell()
    prompts: list[str] = []
    lines = ["SELECT 'a;b'", "AS s", ";", "SELECT", "1; SELECT 1;", ".quit", "SELECT 1;"]
    assert shell.interact(_reader(lines, prompts))
    assert connection.log == ["SELECT 'a;b'\nAS s", "SELECT\n1", "SELECT 1"]
    continued = [CONTINUATION_PROMPT, CONTINUATION_PROMPT]
    assert prompts == [PROMPT, *continued, PROMPT, CONTINUATION_PROMPT, PROMPT]
    assert out.getvalue().count("(1 row)") == 3
    assert err.getvalue() == ""


def test_interact_errors_continue_and_ctrl_c_cancels() -> None:
    shell, connection, out, err = _shell()
    prompts: list[str] = []
    lines = ["SELECT nope;", "SELECT 'x", "^C", "SELECT 1;"]
    assert not shell.interact(_reader(lines, prompts))
    assert connection.log == ["SELECT nope", "SELECT 1"]
    assert prompts == [PROMPT, PROMPT, CONTINUATION_PROMPT, PROMPT, PROMPT]
    assert err.getvalue() == "Error: cannot run 'SELECT nope'\n"
    assert out.getvalue().endswith("(1 row)\n")


def test_interact_runs_unfinished_input_at_eof() -> None:
    shell, connection, _, _ = _shell()
    assert shell.interact(_reader(["SELECT", "1"], []))
    assert connection.log == ["SELECT\n1"]


def test_meta_commands() -> None:
    shell, connection, out, err = _shell()
    lines = [
        ".help",
        ".mode",
        ".mode json",
        ".tables",
        ".timing",
        ".timing on",
        "SELECT 1;",
        ".timing off",
        ".mode xml",
        ".frobnicate",
        ".exit",
    ]
    assert not shell.interact(_reader(lines, []))
    assert connection.log == ["SHOW TABLES", "SELECT 1"]
    output = out.getvalue()
    for command in (".help", ".quit", ".exit", ".timing on|off", ".mode table|csv|json", ".tables"):
        assert command in output
    assert "mode is table\n" in output
    assert '[{"namespace": "sales", "name": "orders"}]\n' in output
    assert "timing is off\n" in output
    assert output.endswith('[{"1": 1}]\n')
    errors = err.getvalue().splitlines()
    assert errors[0].startswith("Time: ")
    assert errors[0].endswith(" ms")
    assert errors[1:] == [
        "Error: usage: .mode table|csv|json|markdown|line",
        "Error: unknown command .frobnicate; type .help for the list",
    ]
    assert shell.mode == "json"
    assert shell.timing is False


# --- the real command -------------------------------------------------------------


def _run(*args: str, stdin: str | None = None, cwd: Path | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.cli", *args],
        check=False,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "TRINITY_HISTORY": os.devnull},
    )


#: Three rows to query (tables hold no data yet: the dataset layer is to come).
ORDERS = (
    "(VALUES (1, 'apple', 1.50::DECIMAL(10, 2)), (2, 'pear', NULL), (3, NULL, 10.25)) "
    "AS orders(id, item, price)"
)


@pytest.fixture
def lake(tmp_path: Path) -> str:
    """A lakehouse with namespace ``sales`` and table ``sales.orders``."""
    uri = str(tmp_path / "lake")
    result = _run(
        uri,
        "-c",
        "CREATE NAMESPACE sales",
        "-c",
        "CREATE TABLE sales.orders (id INTEGER, item VARCHAR, price DECIMAL(10, 2));",
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "OK\nOK\n", "")
    return uri


def test_select_1(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "lake"), "-c", "SELECT 1")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == " 1\n---\n 1\n(1 row)\n"


def test_show_tables_aligned(lake: str) -> None:
    result = _run(
        lake,
        "-c",
        "CREATE TABLE sales.customer_accounts (id BIGINT)",
        "-c",
        "SHOW TABLES IN sales",
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "OK\n table_name\n-------------------\n customer_accounts\n orders\n(2 rows)\n"
    )
    namespaced = _run(lake, "--namespace", "sales", "--format", "csv", "-c", "SHOW TABLES")
    assert (namespaced.returncode, namespaced.stdout) == (
        0,
        "table_name\ncustomer_accounts\norders\n",
    )


def test_csv_output(lake: str) -> None:
    result = _run(lake, "--format", "csv", "-c", f"SELECT * FROM {ORDERS} ORDER BY id")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "id,item,price\n1,apple,1.50\n2,pear,\n3,,10.25\n"


def test_json_output(lake: str) -> None:
    result = _run(
        lake,
        "--format",
        "json",
        "-c",
        f"SELECT * FROM {ORDERS} WHERE id < 3 ORDER BY id; SELECT 1 AS x; "
        "SELECT * FROM sales.orders",
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        '[{"id": 1, "item": "apple", "price": "1.50"}, '
        '{"id": 2, "item": "pear", "price": null}]\n'
        '[{"x": 1}]\n'
        "[]\n"
    )


def test_json_values(tmp_path: Path) -> None:
    result = _run(
        str(tmp_path / "lake"),
        "--format",
        "json",
        "-c",
        "SELECT [1, 2] AS l, {'a': 1} AS s, 'x'::BLOB AS b, DATE '2024-02-29' AS d, "
        "INTERVAL 1 DAY AS i, 'NaN'::DOUBLE AS f, "
        "TIMESTAMPTZ '2024-01-01 00:00:00+00' AS tz, "
        "'00000000-0000-0000-0000-000000000001'::UUID AS u",
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout) == [
        {
            "l": [1, 2],
            "s": {"a": 1},
            "b": "eA==",
            "d": "2024-02-29",
            "i": "P1D",
            "f": "NaN",
            "tz": "2024-01-01T00:00:00+00:00",
            "u": "00000000-0000-0000-0000-000000000001",
        }
    ]


def test_table_output(lake: str) -> None:
    result = _run(lake, "-c", f"SELECT * FROM {ORDERS} ORDER BY id")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        " id | item  | price\n"
        "----+-------+-------\n"
        "  1 | apple |  1.50\n"
        "  2 | pear  |  NULL\n"
        "  3 | NULL  | 10.25\n"
        "(3 rows)\n"
    )


def test_file_with_multi_line_statements(lake: str, tmp_path: Path) -> None:
    script = tmp_path / "script.sql"
    script.write_text(
        "-- a comment; with a semicolon\n"
        "SELECT count(*) AS n\n"
        "  FROM sales.orders\n"
        "  WHERE item <> 'a;b';\n"
        "\n"
        'CREATE TABLE sales."odd;name" (\n'
        "  id INTEGER /* ; */\n"
        ");\n"
        "SELECT\n"
        "  'x;y' AS s\n"
        ";\n"
    )
    result = _run(lake, "--format", "csv", "-f", str(script), "-c", "SHOW TABLES IN sales")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "n\n0\ns\nx;y\ntable_name\nodd;name\norders\n"


def test_syntax_error_exit_1(lake: str) -> None:
    result = _run(lake, "-c", "SELECT 1 AS a; SELEC 2; SELECT 3 AS b")
    assert result.returncode == 1
    assert result.stdout == " a\n---\n 1\n(1 row)\n"
    assert result.stderr.startswith("Error: ")
    assert "SELEC" in result.stderr
    assert "Traceback" not in result.stderr


def test_error_stops_the_run(lake: str) -> None:
    result = _run(
        lake, "-c", "CREATE TABLE sales.orders (id INTEGER)", "-c", "CREATE NAMESPACE later"
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith("Error: ")
    assert "orders" in result.stderr
    namespaces = _run(lake, "--format", "csv", "-c", "SHOW NAMESPACES")
    assert "later" not in namespaces.stdout


def test_a_value_python_cannot_hold_is_an_error_line_not_a_traceback(lake: str) -> None:
    # It was a bare OverflowError's traceback.
    result = _run(
        lake,
        "--format",
        "csv",
        "-c",
        "SELECT DATE '9999-12-31' + 1 AS d",
        "-c",
        "SELECT CAST(DATE '9999-12-31' + 1 AS VARCHAR) AS d",
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith(
        "Error: column 'd' holds the date 10000-01-01 (row 1 of the result)"
    )
    assert "Traceback" not in result.stderr
    text = _run(lake, "--format", "csv", "-c", "SELECT CAST(DATE '9999-12-31' + 1 AS VARCHAR) AS d")
    assert (text.returncode, text.stdout) == (0, "d\n10000-01-01\n")


def test_nanoseconds_are_printed(lake: str) -> None:
    result = _run(
        lake, "--format", "csv", "-c", "SELECT '2020-01-01 00:00:00.123456789'::TIMESTAMP_NS AS n"
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "n\n2020-01-01 00:00:00.123456789\n"


def test_missing_lakehouse_with_no_create(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "absent"), "--no-create", "-c", "SELECT 1")
    assert result.returncode == 1
    assert result.stderr.startswith("Error: ")
    assert not (tmp_path / "absent").exists() or not any((tmp_path / "absent").iterdir())


def test_timing_option(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "lake"), "--timing", "--format", "json", "-c", "SELECT 1 AS a")
    assert result.returncode == 0, result.stderr
    assert result.stdout == '[{"a": 1}]\n'
    # The timer says what the statement cost the store, too.
    assert re.fullmatch(
        r"Time: [\d.]+ ms \(\d+ requests in \d+ rounds, \d+ bytes read, \d+ cache hits\)\n",
        result.stderr,
    ), result.stderr


def test_interactive_through_stdin(lake: str) -> None:
    stdin = (
        "SELECT id,\n"
        "       item\n"
        f"  FROM {ORDERS}\n"
        "  WHERE id = 1;\n"
        ".timing on\n"
        "SELECT 2 AS two;\n"
        ".timing off\n"
        ".mode csv\n"
        "USE sales;\n"
        ".tables\n"
        "SELECT nope;\n"
        "SELECT 3 AS three;\n"
        ".quit\n"
        "SELECT 4 AS four;\n"
    )
    result = _run(lake, stdin=stdin)
    assert result.returncode == 1  # one statement failed
    assert result.stdout == (
        " id | item\n----+-------\n  1 | apple\n(1 row)\n"
        " two\n-----\n   2\n(1 row)\n"
        "table_name\norders\n"
        "three\n3\n"
    )
    errors = result.stderr.splitlines()
    assert errors[0].startswith("Time: ")
    assert errors[0].endswith(" cache hits)")
    assert errors[1].startswith("Error: ")
    assert "nope" in result.stderr


def test_interactive_success_exit_0(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "lake"), stdin="SELECT 1 AS a;\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == " a\n---\n 1\n(1 row)\n"


def test_console_script(tmp_path: Path) -> None:
    script = shutil.which("trinity") or str(Path(sys.executable).parent / "trinity")
    if not Path(script).exists():
        pytest.skip("the trinity console script is not installed (pip install -e .)")
    version = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout == f"trinity {__version__}\n"
    result = subprocess.run(
        [script, str(tmp_path / "lake"), "--format", "csv", "-c", "SELECT 1 AS a"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "a\n1\n", "")
