"""``.import FILE TABLE`` in the ``trinity`` shell: CSV, TSV, Parquet and NDJSON.

Each import is checked by reading the rows back with SELECT (values and
types), and by the versions it made: exactly one for an import that
succeeds, none for one that fails, whatever the failure.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import trinity_dbapi
from trinity_dbapi.cli import Shell, main
from trinity_dbapi.cli.importer import file_format, table_name
from trinity_dbapi.sql.model import TableName

UTC = datetime.timezone.utc
COLUMNS = (
    "id INT8 NOT NULL, amount DECIMAL(10, 2), name VARCHAR(20), day DATE, "
    "at TIMESTAMP, seen TIMESTAMPTZ, ok BOOLEAN, score FLOAT8"
)
#: What the files of the tests hold, as SELECT * returns it.
ROWS = [
    (
        1,
        decimal.Decimal("1.50"),
        "apple, red",
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 1, 2, 3, 4, 5),
        datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        True,
        0.5,
    ),
    (2, None, "", None, None, None, False, None),
    (3, decimal.Decimal("-10.25"), None, datetime.date(1999, 12, 31), None, None, None, -1.0),
]


@pytest.fixture
def lake(tmp_path: Path) -> str:
    """A lakehouse with the table sales.orders of :data:`COLUMNS`."""
    uri = str(tmp_path / "lake")
    with trinity_dbapi.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE sales")
        conn.execute(f"CREATE TABLE sales.orders ({COLUMNS})")
    return uri


def _state(uri: str) -> tuple[int, list[tuple[Any, ...]]]:
    """The latest version and the rows of sales.orders, by id."""
    with trinity_dbapi.connect(uri, create=False, read_only=True) as conn:
        rows = conn.execute("SELECT * FROM sales.orders ORDER BY id").fetchall()
        return conn.lakehouse.latest_version(), rows


def _trinity(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _import(capsys: pytest.CaptureFixture[str], uri: str, *args: str) -> tuple[int, str, str]:
    return _trinity(capsys, uri, "-c", ".import " + " ".join(args))


CSV = (
    "id,amount,name,day,at,seen,ok,score\n"
    '1,1.50,"apple, red",2024-02-29,2024-01-02 03:04:05,2024-01-02 03:04:05+00:00,true,0.5\n'
    '2,,"",,,,false,\n'
    "3,-10.25,,1999-12-31,,,,-1\n"
)


def test_import_csv(lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "orders.csv"
    data.write_text(CSV)
    before, _ = _state(lake)
    assert _import(capsys, lake, str(data), "sales.orders") == (0, "OK, 3 rows affected\n", "")
    assert _state(lake) == (before + 1, ROWS)


def test_import_tsv_into_the_current_namespace(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "orders.tsv"
    # TSV has no quoting: a quote is a character like any other.
    data.write_text(CSV.replace(",", "\t").replace('"apple\t red"', 'apple "red"'))
    data.write_text(data.read_text().replace('\t""\t', "\t\t"))
    before, _ = _state(lake)
    code, out, err = _trinity(capsys, lake, "-n", "sales", "-c", f".import {data} orders")
    assert (code, out, err) == (0, "OK, 3 rows affected\n", "")
    version, rows = _state(lake)
    assert version == before + 1
    assert [row[2] for row in rows] == ['apple "red"', None, None]
    assert [row[:2] + row[3:] for row in rows] == [row[:2] + row[3:] for row in ROWS]


def test_import_parquet(lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "orders.parquet"
    # Columns by name, in another order, in other (wider or narrower) types; some missing.
    table = pa.table(
        {
            "name": ["apple, red", "", None],
            "id": pa.array([1, 2, 3], pa.int32()),
            "amount": pa.array(["1.5", None, "-10.25"]).cast(pa.decimal128(20, 4)),
            "day": pa.array(
                [datetime.date(2024, 2, 29), None, datetime.date(1999, 12, 31)], pa.date32()
            ),
            "score": pa.array([0.5, None, -1.0], pa.float32()),
        }
    )
    pq.write_table(table, data, row_group_size=2)
    before, _ = _state(lake)
    assert _import(capsys, lake, str(data), "sales.orders") == (0, "OK, 3 rows affected\n", "")
    version, rows = _state(lake)
    assert version == before + 1
    expected = [(*row[:4], None, None, None, row[7]) for row in ROWS]
    assert rows == expected


def test_import_ndjson(lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "orders.ndjson"
    objects = [
        {
            "id": 1,
            "amount": "1.50",
            "name": "apple, red",
            "day": "2024-02-29",
            "at": "2024-01-02 03:04:05",
            "seen": "2024-01-02T03:04:05+00:00",
            "ok": True,
            "score": 0.5,
        },
        {"id": 2, "name": "", "ok": False},
        {"id": 3, "amount": -10.25, "day": "1999-12-31", "score": -1},
    ]
    data.write_text("".join(json.dumps(o) + "\n" for o in objects))
    before, _ = _state(lake)
    assert _import(capsys, lake, str(data), "sales.orders") == (0, "OK, 3 rows affected\n", "")
    assert _state(lake) == (before + 1, ROWS)


def test_import_with_an_explicit_format(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "orders.txt"
    data.write_text(CSV)
    code, _, err = _import(capsys, lake, str(data), "sales.orders")
    assert code == 1
    assert err == (
        f"Error: cannot import {data} into sales.orders: cannot tell the format of {data} "
        "from its extension .txt; name it: .import --format csv|tsv|parquet|json FILE TABLE\n"
    )
    assert _import(capsys, lake, "--format", "csv", str(data), "sales.orders")[:2] == (
        0,
        "OK, 3 rows affected\n",
    )
    assert _import(capsys, lake, "--format=CSV", str(data), "sales.orders")[0] == 0
    assert len(_state(lake)[1]) == 6


def test_import_in_the_interactive_shell(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "my orders.csv"
    data.write_text(CSV)
    with trinity_dbapi.connect(lake, autocommit=True) as conn:
        out, err = io.StringIO(), io.StringIO()
        shell = Shell(conn, out=out, err=err, mode="csv")
        lines = iter(["USE sales;", f".import '{data}' orders;", ".import only-one-argument"])

        def read_line(prompt: str) -> str:
            line = next(lines, None)
            if line is None:
                raise EOFError
            return line

        assert not shell.interact(read_line)  # the usage error counts as a failure
    assert out.getvalue() == ""  # csv mode prints no status
    assert err.getvalue() == ("Error: usage: .import [--format csv|tsv|parquet|json] FILE TABLE\n")
    assert len(_state(lake)[1]) == 3


def test_import_is_in_help(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _trinity(capsys, str(tmp_path / "lake"), "-c", ".help")
    assert code == 0
    assert ".import [--format csv|tsv|parquet|json] FILE TABLE  append a file's rows" in out


# -- failures change nothing ---------------------------------------------------------------


def _fails(
    capsys: pytest.CaptureFixture[str], lake: str, path: Path | str, table: str = "sales.orders"
) -> str:
    """Import ``path``, expect a one-line error and no change; return the message."""
    before = _state(lake)
    code, out, err = _import(capsys, lake, str(path), table)
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: cannot import {path} into ") and err.count("\n") == 1
    assert _state(lake) == before
    return err[len("Error: ") : -1]


def test_unknown_namespace_or_bad_name(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "orders.csv"
    data.write_text(CSV)
    message = _fails(capsys, lake, data, "nope.orders")
    assert message.startswith(f"cannot import {data} into nope.orders: namespace 'nope'")
    assert _fails(capsys, lake, data, "a.b.c") == (
        f"cannot import {data} into a.b.c: 'a.b.c' is not a table name: write TABLE or "
        'NAMESPACE.TABLE (double-quote a name with other characters: sales."order lines")'
    )


def test_import_creates_a_missing_table_from_a_csv_file(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "people.csv"
    data.write_text('id,name,born,score\n1,"Ana, B",1990-05-01,1.5\n2,,1985-12-31,\n3,"",,-2\n')
    before, _ = _state(lake)
    code, out, err = _import(capsys, lake, str(data), "sales.people")
    assert (code, out) == (0, "OK, 3 rows affected\n")
    assert err == "created table sales.people (id INT8, name VARCHAR, born DATE, score FLOAT8)\n"
    with trinity_dbapi.connect(lake, create=False, read_only=True) as conn:
        assert conn.lakehouse.latest_version() == before + 1  # the table and its rows: one commit
        rows = conn.execute("SELECT * FROM sales.people ORDER BY id").fetchall()
    assert rows == [
        (1, "Ana, B", datetime.date(1990, 5, 1), 1.5),
        (2, None, datetime.date(1985, 12, 31), None),
        (3, "", None, -2.0),
    ]


def test_import_creates_a_table_from_parquet_and_ndjson(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parquet = tmp_path / "p.parquet"
    pq.write_table(pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["x", None]}), parquet)
    code, out, err = _import(capsys, lake, str(parquet), "sales.p")
    assert (code, out, err) == (
        0,
        "OK, 2 rows affected\n",
        "created table sales.p (k INT4, v VARCHAR)\n",
    )
    ndjson = tmp_path / "j.jsonl"
    ndjson.write_text('{"a": 1, "b": true}\n{"a": 2, "b": null}\n')
    code, out, err = _import(capsys, lake, str(ndjson), "sales.j")
    assert (code, err) == (0, "created table sales.j (a INT8, b BOOLEAN)\n")
    with trinity_dbapi.connect(lake, create=False, read_only=True) as conn:
        assert conn.execute("SELECT * FROM sales.p ORDER BY k").fetchall() == [(1, "x"), (2, None)]
        assert conn.execute("SELECT * FROM sales.j ORDER BY a").fetchall() == [(1, True), (2, None)]


def test_a_failed_import_does_not_create_the_table(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The types come from the first block; a later value that does not fit creates nothing."""
    data = tmp_path / "late.csv"
    rows = "".join(f"{i}\n" for i in range(400_000))  # more than pyarrow's first block
    data.write_text("n\n" + rows + "oops\n")
    message = _fails(capsys, lake, data, "sales.late")
    assert message.startswith(f"cannot import {data} into sales.late:")
    assert "oops" in message
    with trinity_dbapi.connect(lake, create=False, read_only=True) as conn:
        assert conn.execute("SHOW TABLES IN sales").fetchall() == [("orders",)]


def test_missing_or_unreadable_file(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.csv"
    assert _fails(capsys, lake, missing) == (
        f"cannot import {missing} into sales.orders: there is no file {missing} "
        "(No such file or directory); check the path"
    )
    folder = tmp_path / "folder.parquet"
    folder.mkdir()
    assert _fails(capsys, lake, folder).endswith(f"{folder} is a folder, not a file; name a file")
    not_parquet = tmp_path / "orders.parquet"
    not_parquet.write_text(CSV)
    assert "Parquet magic bytes not found" in _fails(capsys, lake, not_parquet)
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("id,name\n1,caf\xe9\n".encode("latin-1"))
    assert "UTF8" in _fails(capsys, lake, latin1).replace("utf-8", "UTF8")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("id,amount\n1,abc\n", "column 'amount': The string 'abc' is not a valid decimal128"),
        ("id,amount\n1,123456789012.5\n", "column 'amount': Error converting '123456789012.5'"),
        ("id,name\n1,xxxxxxxxxxxxxxxxxxxxxxxxx\n", "name"),  # VARCHAR(20)
        ("id,day\n1,2024-02-30\n", "column 'day'"),
        ("id,amount\n,1\n", "column 'id' is NOT NULL"),
        ("amount\n1\n", "column 'id' is NOT NULL"),  # a NOT NULL column left out
        ("id,amount\n1,2,3\n", "Expected 2 columns, got 3"),
    ],
)
def test_a_value_that_does_not_fit(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, problem: str
) -> None:
    data = tmp_path / "orders.csv"
    data.write_text(text)
    message = _fails(capsys, lake, data)
    assert problem in message
    assert message.endswith("then import it again")


def test_a_bad_value_after_many_rows_loses_nothing(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Blocks read (and data files written) before the bad one are not committed."""
    data = tmp_path / "orders.csv"
    rows = "".join(f"{i},{i}.25\n" for i in range(300_000))  # several megabytes, many blocks
    data.write_text("id,amount\n" + rows + "300000,oops\n")
    message = _fails(capsys, lake, data)
    assert "The string 'oops' is not a valid decimal128 number" in message


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        ("id,amount,nmae", "the header line names 'nmae', which the table has no column for"),
        ("id,amount,id", "the header line names 'id' twice"),
        ("1,1.50,apple", "the header line names '1', '1.50', 'apple'"),  # no header at all
    ],
)
def test_a_wrong_header(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], header: str, problem: str
) -> None:
    data = tmp_path / "orders.csv"
    data.write_text(header + "\n2,2.50,pear\n")
    message = _fails(capsys, lake, data)
    assert problem in message
    assert message.endswith(
        "the table's columns are id, amount, name, day, at, seen, ok, score: fix the header line"
    )


def test_other_wrong_files(lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert "the file is empty; its first line must be a header" in _fails(capsys, lake, empty)
    parquet = tmp_path / "extra.parquet"
    pq.write_table(pa.table({"id": [1], "extra": [2]}), parquet)
    assert "the file's schema names 'extra'" in _fails(capsys, lake, parquet)
    ndjson = tmp_path / "extra.json"
    ndjson.write_text('{"id": 1, "extra": 2}\n')
    assert "an object has a field the table has no column for" in _fails(capsys, lake, ndjson)
    nested = tmp_path / "nested.csv"
    nested.write_text("id,tags\n1,x\n")
    with trinity_dbapi.connect(lake, autocommit=True) as conn:
        conn.execute("ALTER TABLE sales.orders ADD COLUMN tags LIST<VARCHAR>")
    assert "column 'tags' is list<varchar>, which a CSV file cannot hold" in _fails(
        capsys, lake, nested
    )


# -- helpers ---------------------------------------------------------------------------------


def test_file_format_and_table_name() -> None:
    assert [file_format(p) for p in ("a.CSV", "a.tsv", "a.pq", "a.ndjson", "a.jsonl")] == [
        "csv",
        "tsv",
        "parquet",
        "json",
        "json",
    ]
    assert file_format("a.csv", "Parquet") == "parquet"
    assert table_name("Sales.Orders") == TableName("sales", "orders")
    assert table_name('sales."Order Lines"') == TableName("sales", "Order Lines")
    assert table_name("orders") == TableName(None, "orders")
    for bad in ("", "a.", "a.b.c", "t AS x", "t; DROP TABLE t", "a b"):
        with pytest.raises(trinity_dbapi.ProgrammingError, match="is not a table name"):
            table_name(bad)


def test_import_draws_a_bar_on_a_terminal(lake: str, tmp_path: Path) -> None:
    from tests.cli.test_progress import _on_a_terminal

    data = tmp_path / "orders.csv"
    data.write_text("id,amount\n" + "".join(f"{i},{i}.5\n" for i in range(50_000)))
    code, stdout, drawn = _on_a_terminal(lake, "-c", f".import {data} sales.orders")
    assert (code, stdout) == (0, "OK, 50000 rows affected\n")
    # streamed: the bar counts rows without a total
    assert "insert into sales.orders: 0 rows [" in drawn
    assert "Error" not in drawn


def test_meta_commands_in_dash_c(lake: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _trinity(capsys, lake, "-n", "sales", "-c", ".tables", "-c", ".mode") == (
        0,
        " table_name\n------------\n orders\n(1 row)\nmode is table\n",
        "",
    )
    code, out, err = _trinity(capsys, lake, "-c", ".frobnicate", "-c", "SELECT 1")
    assert (code, out) == (1, "")  # the run stops at the failing command
    assert err == "Error: unknown command .frobnicate; type .help for the list\n"


def test_import_through_a_read_only_connection(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "orders.csv"
    data.write_text(CSV)
    before = _state(lake)
    code, out, err = _trinity(capsys, lake, "--read-only", "-c", f".import {data} sales.orders")
    assert (code, out) == (1, "")
    assert err.startswith(f"Error: cannot import {data} into sales.orders: this connection is")
    assert _state(lake) == before


def test_copy_in_the_shell_reads_and_writes_local_files(
    lake: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shell's user is a local user: COPY reaches any local file, relative ones too."""
    data = tmp_path / "orders.csv"
    data.write_text(CSV)
    out_file = tmp_path / "out" / "orders.parquet"
    out_file.parent.mkdir()
    script = (
        f"COPY sales.orders FROM '{data}'; "
        f"COPY (SELECT * FROM sales.orders ORDER BY id) TO '{out_file}'"
    )
    code, out, err = _trinity(capsys, lake, "-c", script)
    assert (code, out, err) == (0, "OK, 3 rows affected\nOK, 3 rows affected\n", "")
    assert _state(lake)[1] == ROWS
    assert pq.read_table(out_file).num_rows == 3
    code, out, err = _trinity(capsys, lake, "-c", f"COPY sales.orders TO '{out_file}'")
    assert code == 1
    assert "exists already" in err and "OVERWRITE" in err
