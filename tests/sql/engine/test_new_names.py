"""Names are what they look like (issue 29, items 7, 8 and 9).

* Item 7: a NUL in a column name or a property key was accepted, and DuckDB
  then showed ``a\\x00b`` as ``a``; every new name now refuses it.
* Item 8: NFC and NFD spellings of ``café``, zero-width and bidi characters
  made names that print alike; every new name must be NFC and free of them
  (docs/format.md, Object names), on every write path alike, while a
  lakehouse an older release wrote keeps reading, writing and dropping its
  objects under their exact names.
* Item 9: an index on a column named ``.`` or ``..`` failed with an
  InvalidURIError quoting an internal path; such columns are indexed.
"""

from __future__ import annotations

import contextlib
import unicodedata
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.format.definitions import (
    Column,
    DataType,
    LakehouseDefinition,
    NamespaceDefinition,
    TableDefinition,
    ViewDefinition,
)
from trinity_dbapi.tables import managed

Backend = tuple[str, dict[str, Any]]
NFC = "caf\u00e9"
NFD = "cafe\u0301"


def q(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def s(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _connect(uri: str, **kwargs: Any) -> Any:
    return trinity_dbapi.connect(uri, autocommit=True, **kwargs)


@pytest.fixture
def cur() -> Iterator[Any]:
    conn = _connect(f"memory://new-names-{uuid.uuid4().hex}")
    yield conn.cursor()
    conn.close()


def _refused(cur: Any, sql: str, *needles: str) -> errors.InvalidNameError:
    with pytest.raises(errors.InvalidNameError) as info:
        cur.execute(sql)
    assert isinstance(info.value, errors.ProgrammingError)
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))
    return info.value


# --- item 7: NUL ------------------------------------------------------------------


def test_nul_in_a_column_name_is_refused_and_nothing_is_created(cur: Any) -> None:
    # Before: the table was created, its description showed ['a', 'a'] and
    # UPDATE ... WHERE "a" = 2 updated nothing.
    _refused(
        cur,
        'CREATE TABLE t ("a\x00b" INT, "a" INT)',
        "invalid column name 'a\\x00b' in 'CREATE TABLE t",
        "U+0000 at position 1 is a control character",
        "remove that character",
    )
    assert cur.execute("SHOW TABLES").fetchall() == []
    cur.execute('CREATE TABLE t ("a" INT)')
    _refused(cur, 'ALTER TABLE t ADD COLUMN "b\x00" INT', "'b\\x00'", "U+0000 at position 1")
    _refused(cur, 'ALTER TABLE t RENAME COLUMN a TO "\x00a"', "U+0000 at position 0")
    _refused(cur, 'CREATE TABLE u (s STRUCT<"f\x00": INT>)', "'f\\x00'")
    # DuckDB's results would cut such a name short: a query refuses it too.
    _refused(cur, 'SELECT a AS "a\x00b" FROM t', "invalid alias 'a\\x00b'")
    _refused(cur, 'CREATE TABLE c AS SELECT 1 AS "c\x00d"', "invalid alias 'c\\x00d'")
    _refused(cur, 'CREATE VIEW v AS SELECT 1 AS "c\x00d"', "invalid alias 'c\\x00d'")
    assert cur.execute("SHOW TABLES").fetchall() == [("t",)]
    assert [d[0] for d in cur.execute("SELECT * FROM t").description] == ["a"]


def test_nul_in_a_column_name_given_through_the_python_api_is_refused(cur: Any) -> None:
    cur.execute("CREATE NAMESPACE ns")
    txn = cur.connection.lakehouse.begin()
    column = Column(1, "a\x00b", INT)
    with pytest.raises(errors.InvalidNameError, match=r"'a\\x00b' of table ns\.t"):
        txn.create_table("ns", TableDefinition("t", [column], table_format="parquet"))


def test_nul_in_a_property_key_is_refused(cur: Any) -> None:
    _refused(cur, "CREATE TABLE t (a INT) WITH ('k\x00' = 'v')", "property key 'k\\x00'")
    _refused(cur, "CREATE NAMESPACE n WITH ('k\x00' = 'v')", "of namespace n")
    cur.execute("CREATE NAMESPACE n")
    _refused(cur, "ALTER NAMESPACE n SET PROPERTIES ('\x00' = 'v')", "property key '\\x00'")
    cur.execute("CREATE TABLE n.t (a INT)")
    _refused(cur, "ALTER TABLE n.t SET PROPERTIES ('k\x00' = 'v')", "of table n.t")
    # Values are free text: a NUL in one is kept as it is.
    cur.execute("ALTER TABLE n.t SET PROPERTIES ('k' = 'v\x00w')")
    table = cur.connection.lakehouse.begin().load_table("n", "t")
    assert table.properties["k"] == "v\x00w"


# --- item 8: look-alike names -----------------------------------------------------------


def test_nfc_and_nfd_spellings_cannot_both_be_created(cur: Any) -> None:
    # Before: both tables were created and SHOW TABLES printed 'café' twice.
    cur.execute(f"CREATE TABLE {q(NFC)} (x INT)")
    error = _refused(
        cur,
        f"CREATE TABLE {q(NFD)} (x INT)",
        "invalid table name",
        "(escaped: 'cafe\\u0301')",
        "not in Unicode normalization form NFC",
        "(escaped: 'caf\\xe9')",
        "unicodedata.normalize('NFC', name)",
    )
    assert error.name == NFD
    assert cur.execute("SHOW TABLES").fetchall() == [(NFC,)]
    _refused(cur, f"CREATE TABLE t ({q(NFD)} INT)", "invalid column name")
    _refused(cur, f"CREATE NAMESPACE {q(NFD)}", "invalid namespace name")
    _refused(cur, f"CREATE VIEW {q(NFD)} AS SELECT 1 AS a", "invalid view name")
    # Lookups stay exact: the NFD spelling names no table.
    with pytest.raises(errors.NoSuchTableError):
        cur.execute(f"SELECT * FROM {q(NFD)}")


@pytest.mark.parametrize(
    ("char", "what"),
    [
        ("\u200b", "U+200B ZERO WIDTH SPACE at position 1 renders as nothing"),
        ("\u200d", "U+200D ZERO WIDTH JOINER at position 1 renders as nothing"),
        ("\u2060", "U+2060 WORD JOINER at position 1 renders as nothing"),
        ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE at position 1 renders as nothing"),
        ("\u00ad", "U+00AD SOFT HYPHEN at position 1 renders as nothing"),
        ("\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE at position 1 is a bidirectional control"),
        ("\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE at position 1 is a bidirectional control"),
        ("\u200f", "U+200F RIGHT-TO-LEFT MARK at position 1 is a bidirectional control"),
        ("\x85", "U+0085 at position 1 is a control character"),
        ("\u00a0", "U+00A0 NO-BREAK SPACE at position 1 is a space or line break"),
    ],
)
def test_invisible_and_bidi_characters_are_refused_in_every_kind_of_name(
    cur: Any, char: str, what: str
) -> None:
    # Before: "a\u200bb" and "a\u202eb" were accepted as table names.
    name = f"a{char}b"
    cur.execute("CREATE TABLE t (x INT)")
    for sql in (
        f"CREATE TABLE {q(name)} (x INT)",
        f"CREATE NAMESPACE {q(name)}",
        f"CREATE VIEW {q(name)} AS SELECT 1 AS a",
        f"ALTER TABLE t RENAME TO {q(name)}",
        f"CREATE TABLE u ({q(name)} INT)",
        f"ALTER TABLE t RENAME COLUMN x TO {q(name)}",
        f"CREATE TABLE u AS SELECT 1 AS {q(name)}",
        f"CREATE INDEX {q(name)} ON t (x)",
        f"ALTER TABLE t SET PROPERTIES ({q(name)} = 'v')",
    ):
        _refused(cur, sql, what, ascii(name))
    assert cur.execute("SHOW TABLES").fetchall() == [("t",)]
    assert [d[0] for d in cur.execute("SELECT * FROM t").description] == ["x"]


# --- item 9: an index on a column named . or .. --------------------------------------


def test_an_index_on_a_column_named_dot_or_dot_dot(backend: Backend) -> None:
    # Before: CREATE INDEX failed with InvalidURIError quoting '<uuid>/indices/../...'.
    uri, options = backend
    conn = _connect(uri, storage_options=options)
    cur = conn.cursor()
    long = "\u00e9" * 200  # 1,200 bytes URL-encoded: more than a file name may have
    cur.execute(f'CREATE TABLE t ("." INT, ".." INT, {q(long)} INT, v INT)')
    cur.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [(i, i % 3, i % 5, i) for i in range(9)])
    for index, column in (("i1", "."), ("i2", ".."), ("i3", long)):
        cur.execute(f"CREATE INDEX {index} ON t ({q(column)})")
    cur.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [(100, 1, 4, 100), (101, 2, 0, 101)])
    assert cur.execute('SELECT v FROM t WHERE "." = 4').fetchall() == [(4,)]
    assert cur.execute('SELECT v FROM t WHERE ".." = 1 ORDER BY v').fetchall() == [
        (1,),
        (4,),
        (7,),
        (100,),
    ]
    assert cur.execute(f"SELECT v FROM t WHERE {q(long)} = 4 ORDER BY v").fetchall() == [
        (4,),
        (100,),
    ]
    table = conn.lakehouse.begin().load_table("default", "t")
    meta = managed.metadata(conn.lakehouse.storage, table)
    directories = {column: path.split("/")[2] for column, path in meta.indices.items()}
    assert directories["."] == "%2E"
    assert directories[".."] == "%2E%2E"
    assert len(directories[long].encode()) <= 255
    assert directories[long].startswith("%C3%A9") and "~" in directories[long]
    assert managed.indexes(table) == {"i1": ".", "i2": "..", "i3": long}
    conn.close()


# --- every write path: one verdict per name ------------------------------------------

#: Characters the rule is about, and ordinary ones, so that generated names
#: are often refused and often allowed.
_ALPHABET = st.sampled_from(
    [
        *"ab_ .%\"'?日😀Å\u0430\ufb01",
        *("\u00e9", "e\u0301", "\u0301", "\u212b", "\u200b", "\u200d", "\u2060", "\ufeff"),
        *("\u00ad", "\u202e", "\u2066", "\u200e", "\x00", "\t", "\n", "\x7f", "\x85", "\u00a0"),
        *("\u2028", "\u3000", "\ufe0f", "\u3164"),
    ]
)
_NAMES = st.lists(_ALPHABET, min_size=1, max_size=6).map(
    lambda pieces: "".join(pieces).strip() or "x"
) | st.text(min_size=1, max_size=6)


def _rule_allows(name: str) -> bool:
    """The rule, from the Unicode properties docs/format.md names (an oracle)."""
    for char in name:
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Cs", "Zl", "Zp") or (category == "Zs" and char != " "):
            return False
        if char in "\u034f\u3164\ufe0f" or 0xE0000 <= ord(char) <= 0xE0FFF:
            return False
    return unicodedata.is_normalized("NFC", name)


Path_ = Callable[[Any, str], None]


def _sql_paths() -> dict[str, Path_]:
    """Each way a name comes into a lakehouse, as ``(connection, name) -> None``."""

    def ex(conn: Any, sql: str, params: Any = None) -> None:
        conn.cursor().execute(sql, params)

    def python_table(conn: Any, name: str) -> None:
        txn = conn.lakehouse.begin()
        txn.create_table("p", TableDefinition(name, [Column(1, "x", INT)], table_format="parquet"))
        txn.commit()

    def python_column(conn: Any, name: str) -> None:
        txn = conn.lakehouse.begin()
        txn.create_table("c", TableDefinition("pc", [Column(1, name, INT)], table_format="parquet"))
        txn.commit()

    def python_column_property(conn: Any, name: str) -> None:
        txn = conn.lakehouse.begin()
        column = Column(1, "x", INT, properties={name: "v"})
        txn.create_table("c", TableDefinition("pp", [column], table_format="parquet"))
        txn.commit()

    def python_namespace_property(conn: Any, name: str) -> None:
        txn = conn.lakehouse.begin()
        txn.create_namespace("pn", {name: "v"})
        txn.commit()

    def sqlalchemy_table(conn: Any, name: str, *, as_column: bool = False) -> None:
        import sqlalchemy as sa

        engine = sa.create_engine(f"trinity:///{conn.lakehouse.storage.root_uri}")
        try:
            metadata = sa.MetaData()
            if as_column:
                sa.Table("sa_c", metadata, sa.Column(name, sa.Integer), schema="c")
            else:
                sa.Table(name, metadata, sa.Column("x", sa.Integer), schema="sa")
            metadata.create_all(engine)
        finally:
            engine.dispose()

    def pandas_column(conn: Any, name: str) -> None:
        import pandas as pd
        import sqlalchemy as sa

        engine = sa.create_engine(f"trinity:///{conn.lakehouse.storage.root_uri}")
        try:
            pd.DataFrame({name: [1, 2]}).to_sql("pd", engine, schema="c", index=False)
        finally:
            engine.dispose()

    return {
        # Object names: the seed's rule and the rule for new names.
        "CREATE NAMESPACE": lambda c, n: ex(c, f"CREATE NAMESPACE {q(n)}"),
        "CREATE TABLE": lambda c, n: ex(c, f"CREATE TABLE c.{q(n)} (x INT)"),
        "CREATE VIEW": lambda c, n: ex(c, f"CREATE VIEW v.{q(n)} AS SELECT 1 AS x"),
        "ALTER TABLE RENAME TO": lambda c, n: ex(c, f"ALTER TABLE r.src RENAME TO r.{q(n)}"),
        "Transaction.create_table": python_table,
        "SQLAlchemy Table": sqlalchemy_table,
        # Other names and keys: the rule for new names only.
        "column": lambda c, n: ex(c, f"CREATE TABLE c.col ({q(n)} INT)"),
        "nested field": lambda c, n: ex(c, f"CREATE TABLE c.nf (s STRUCT<{q(n)}: INT>)"),
        "ADD COLUMN": lambda c, n: ex(c, f"ALTER TABLE r.add ADD COLUMN {q(n)} INT"),
        "RENAME COLUMN": lambda c, n: ex(c, f"ALTER TABLE r.src RENAME COLUMN y TO {q(n)}"),
        "CTAS column": lambda c, n: ex(c, f"CREATE TABLE c.ctas AS SELECT 1 AS {q(n)}"),
        "view column": lambda c, n: ex(c, f"CREATE VIEW c.vc AS SELECT 1 AS {q(n)}"),
        "CREATE INDEX": lambda c, n: ex(c, f"CREATE INDEX {q(n)} ON r.src (y)"),
        "table property": lambda c, n: ex(c, f"CREATE TABLE c.tp (x INT) WITH ({s(n)} = 'v')"),
        "SET PROPERTIES": lambda c, n: ex(c, f"ALTER TABLE r.src SET PROPERTIES ({s(n)} = 'v')"),
        "namespace property": lambda c, n: ex(c, f"CREATE NAMESPACE np WITH ({q(n)} = 'v')"),
        "ALTER NAMESPACE": lambda c, n: ex(c, f"ALTER NAMESPACE r SET PROPERTIES ({s(n)} = 'v')"),
        "namespace property (Python)": python_namespace_property,
        "column property (Python)": python_column_property,
        "column (Python)": python_column,
        "SQLAlchemy Column": lambda c, n: sqlalchemy_table(c, n, as_column=True),
        "pandas to_sql": pandas_column,
        "export_snapshot": lambda c, n: ex(c, "CALL system.export_snapshot(name => ?)", [n]),
    }


def _unwrapped(write: Path_, conn: Any, name: str) -> None:
    """``write(conn, name)``, raising the driver's own error where SQLAlchemy wraps it."""
    import sqlalchemy as sa

    try:
        write(conn, name)
    except sa.exc.DBAPIError as exc:
        raise exc.orig from exc


INT = DataType("int4")
_PATHS = _sql_paths()
_OBJECT_PATHS = list(_PATHS)[:6]
# The namespaces, and the tables the paths make under fixed names, that a
# generated name must not collide with ("pc" made c.pc before the path that
# makes c.pc itself).
_RESERVED = {"system", "information_schema", "c", "v", "r", "sa", "p", "np", "pn"} | {
    "pc",
    "pp",
    "col",
    "ctas",
    "nf",
    "tp",
    "vc",
    "add",
    "src",
}


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(name=_NAMES)
def test_every_write_path_accepts_and_refuses_the_same_names(name: str) -> None:
    assume(name.casefold() not in _RESERVED and name.casefold() not in ("x", "y", "s"))
    assume(not name.isdigit())  # an export name must not be a version number
    allowed = _rule_allows(name)
    conn = _connect(f"memory://paths-{uuid.uuid4().hex}")
    cur = conn.cursor()
    for namespace in ("c", "v", "r", "sa", "p"):
        cur.execute(f"CREATE NAMESPACE {namespace}")
    cur.execute("CREATE TABLE r.src (x INT, y INT)")
    cur.execute("CREATE TABLE r.add (x INT)")
    verdicts = {}
    for path, write in _PATHS.items():
        expected = allowed and (path not in _OBJECT_PATHS or " " not in name)
        try:
            _unwrapped(write, conn, name)
        except errors.InvalidNameError as exc:
            verdicts[path] = False
            assert exc.name == name, exc
        else:
            verdicts[path] = True
        assert verdicts[path] == expected, (path, name, verdicts)
        if path == "ALTER TABLE RENAME TO" and verdicts[path]:
            cur.execute(f"ALTER TABLE r.{q(name)} RENAME TO r.src")  # back, for the next paths
        if path == "RENAME COLUMN" and verdicts[path]:
            cur.execute(f"ALTER TABLE r.src RENAME COLUMN {q(name)} TO y")
    conn.close()


def test_a_lakehouse_property_key_obeys_the_rule() -> None:
    for key, allowed in (("retention", True), ("k\u200b", False), (NFD, False), (NFC, True)):
        uri = f"memory://props-{uuid.uuid4().hex}"
        if allowed:
            _connect(uri, properties={key: "v"}).close()
            continue
        with pytest.raises(errors.InvalidNameError, match="property key"):
            _connect(uri, properties={key: "v"})
        with pytest.raises(errors.LakehouseNotFoundError):
            _connect(uri, create=False)  # nothing was written


# --- a lakehouse an older release wrote ------------------------------------------------


@contextlib.contextmanager
def _older_release() -> Iterator[None]:
    """Writes as a release before the rule for new names made them: nothing checks."""
    definitions = (LakehouseDefinition, NamespaceDefinition, TableDefinition, ViewDefinition)
    saved = [(kind, kind.check_new_names) for kind in definitions]
    try:
        for kind in definitions:
            kind.check_new_names = lambda self, *args, **kwargs: None  # type: ignore[method-assign]
        yield
    finally:
        for kind, check in saved:
            kind.check_new_names = check  # type: ignore[method-assign]


ZW = "a\u200bb"


def test_an_older_lakehouse_with_look_alike_names_still_reads_writes_and_drops(
    tmp_path: Path,
) -> None:
    root = str(tmp_path / "lake")
    with _older_release():
        conn = _connect(root)
        cur = conn.cursor()
        cur.execute(f"CREATE NAMESPACE {q(ZW)} WITH ('k\t' = 'v')")
        cur.execute(f"CREATE TABLE {q(NFC)} (x INT)")
        cur.execute(f"CREATE TABLE {q(NFD)} ({q(ZW)} INT, {q(NFD)} INT) WITH ({q(ZW)} = 'p')")
        cur.execute(f"CREATE TABLE {q(ZW)}.{q(ZW)} ({q(NFD)} INT)")
        cur.execute(f"CREATE VIEW {q(ZW)} AS SELECT 1 AS {q(ZW)}")
        cur.execute(f"INSERT INTO {q(NFD)} VALUES (1, 2)")
        cur.execute(f"INSERT INTO {q(NFC)} VALUES (9)")
        conn.close()
    # This release, a fresh connection: every name read exactly as stored.
    conn = _connect(root, create=False)
    cur = conn.cursor()
    assert sorted(cur.execute("SHOW TABLES").fetchall()) == sorted([(NFC,), (NFD,)])
    namespaces = sorted(cur.execute("SHOW NAMESPACES").fetchall())
    assert namespaces == sorted([("default",), (ZW,), ("information_schema",), ("system",)])
    assert cur.execute(f"SELECT * FROM {q(NFD)}").fetchall() == [(1, 2)]
    assert [d[0] for d in cur.description] == [ZW, NFD]
    assert cur.execute(f"SELECT * FROM {q(NFC)}").fetchall() == [(9,)]
    assert cur.execute(f"SELECT {q(ZW)} FROM {q(ZW)}").fetchall() == [(1,)]
    columns = "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
    assert cur.execute(columns + " ORDER BY ordinal_position", [NFD]).fetchall() == [
        (ZW,),
        (NFD,),
    ]
    # Writes that keep the old names work; a new name must obey the rule.
    cur.execute(f"INSERT INTO {q(NFD)} ({q(ZW)}, {q(NFD)}) VALUES (3, 4)")
    cur.execute(f"UPDATE {q(NFD)} SET {q(NFD)} = 5 WHERE {q(ZW)} = 3")
    cur.execute(f"ALTER TABLE {q(NFD)} ADD COLUMN z INT")
    cur.execute(f"ALTER TABLE {q(NFD)} SET PROPERTIES ('ok' = '1')")
    cur.execute(f"ALTER NAMESPACE {q(ZW)} SET PROPERTIES ('ok' = '1')")
    cur.execute(f"CREATE OR REPLACE VIEW {q(ZW)} AS SELECT 2 AS {q(ZW)}")
    with pytest.raises(errors.InvalidNameError):
        cur.execute(f"ALTER TABLE {q(NFD)} ADD COLUMN {q('z' + chr(0x200B))} INT")
    assert cur.execute(f"SELECT * FROM {q(NFD)} ORDER BY 1").fetchall() == [
        (1, 2, None),
        (3, 5, None),
    ]
    txn = conn.lakehouse.begin()
    table = txn.load_table("default", NFD)
    assert dict(table.properties) == {ZW: "p", "ok": "1"}
    assert dict(txn.load_namespace(ZW).properties) == {"k\t": "v", "ok": "1"}
    # Renamed to a valid name (and not to another look-alike), then dropped.
    cur.execute(f"ALTER TABLE {q(ZW)}.{q(ZW)} RENAME COLUMN {q(NFD)} TO {q(NFC)}")
    described = cur.execute(f"DESCRIBE {q(ZW)}.{q(ZW)}").fetchall()
    assert [row[0] for row in described] == [NFC]
    with pytest.raises(errors.InvalidNameError, match="NFC"):
        cur.execute(f"ALTER TABLE {q(ZW)}.{q(ZW)} RENAME COLUMN {q(NFC)} TO {q(NFD)}")
    with pytest.raises(errors.InvalidNameError, match="NFC"):
        cur.execute(f"ALTER TABLE {q(NFD)} RENAME TO {q('x' + NFD)}")
    cur.execute(f"ALTER TABLE {q(ZW)}.{q(ZW)} RENAME TO {q(ZW)}.fine")
    assert cur.execute(f"SHOW TABLES IN {q(ZW)}").fetchall() == [("fine",)]
    cur.execute(f"DROP TABLE {q(NFD)}")
    cur.execute(f"DROP VIEW {q(ZW)}")
    cur.execute(f"DROP NAMESPACE {q(ZW)} CASCADE")
    assert cur.execute("SHOW TABLES").fetchall() == [(NFC,)]
    assert (ZW,) not in cur.execute("SHOW NAMESPACES").fetchall()
    conn.close()


# --- Kartothek import: the column names of another program's dataset ----------------


@pytest.mark.parametrize(
    ("column", "refused"),
    [
        (NFC, None),
        (NFD, "not in Unicode normalization form NFC"),
        (ZW, "U+200B ZERO WIDTH SPACE at position 1"),
        ("a\u202eb", "U+202E RIGHT-TO-LEFT OVERRIDE at position 1"),
        ("a\tb", "U+0009 at position 1 is a control character"),
    ],
)
def test_kartothek_import_holds_the_dataset_columns_to_the_rule(
    tmp_path: Path, column: str, refused: str | None
) -> None:
    pd = pytest.importorskip("pandas")
    eager = pytest.importorskip("plateau.io.eager", reason="plateau (the test extra) is missing")
    minimalkv = pytest.importorskip("minimalkv", reason="minimalkv comes with plateau")
    store = tmp_path / "store"
    store.mkdir()
    eager.store_dataframes_as_dataset(
        store=lambda: minimalkv.get_store_from_url(f"hfs://{store}"),
        dataset_uuid="ds",
        dfs=[pd.DataFrame({"id": [1, 2], column: ["x", "y"]})],
    )
    conn = _connect(str(tmp_path / "lake"))
    cur = conn.cursor()
    version = conn.lakehouse.latest_version()
    sql = "CALL system.import_kartothek(table => 'k', location => ?, dataset_uuid => 'ds')"
    if refused is None:
        cur.execute(sql, [str(store)])
        assert cur.execute(f"SELECT id, {q(column)} FROM k ORDER BY id").fetchall() == [
            (1, "x"),
            (2, "y"),
        ]
    else:
        with pytest.raises(errors.InvalidNameError) as info:
            cur.execute(sql, [str(store)])
        message = str(info.value)
        assert f"invalid column name {column!r}" in message and "of table default.k" in message
        assert refused in message
        assert conn.lakehouse.latest_version() == version  # nothing committed
        assert cur.execute("SHOW TABLES").fetchall() == []
    conn.close()
