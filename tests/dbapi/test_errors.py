"""Each PEP 249 error class, raised by the situation it stands for, through the driver."""

from __future__ import annotations

from pathlib import Path

import pytest

import trinity_dbapi
from trinity_dbapi import errors


@pytest.fixture
def uri(tmp_path: Path) -> str:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    conn.cursor().execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (a INT)")
    conn.close()
    return str(tmp_path / "lake")


def test_hierarchy_has_one_root() -> None:
    for cls in (
        errors.InterfaceError,
        errors.DatabaseError,
        errors.DataError,
        errors.OperationalError,
        errors.IntegrityError,
        errors.InternalError,
        errors.ProgrammingError,
        errors.NotSupportedError,
        errors.SQLSyntaxError,
        errors.CommitConflictError,
        errors.RetriesExhaustedError,
        errors.CorruptFileError,
        errors.ReservedNamespaceError,
        errors.UnsupportedStatementError,
    ):
        assert issubclass(cls, trinity_dbapi.Error)
    assert issubclass(errors.CommitConflictError, errors.OperationalError)
    assert issubclass(errors.RetriesExhaustedError, errors.OperationalError)
    assert issubclass(errors.SQLSyntaxError, errors.ProgrammingError)


def test_interface_error_on_closed_objects(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    cur = conn.cursor()
    conn.close()
    with pytest.raises(errors.InterfaceError):
        cur.execute("SELECT 1")
    with pytest.raises(errors.InterfaceError):
        conn.commit()


def test_data_error_from_a_bad_conversion(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    with pytest.raises(errors.DataError, match="DuckDB"):
        cur.execute("SELECT CAST(? AS INTEGER)", ["not a number"])
    with pytest.raises(errors.DataError):
        cur.execute("SELECT ?", [2**200])


def test_operational_error_on_conflict_names_object_and_version(uri: str) -> None:
    one = trinity_dbapi.connect(uri, isolation_level="SNAPSHOT")
    two = trinity_dbapi.connect(uri, isolation_level="SNAPSHOT")
    one.cursor().execute("ALTER TABLE ns.t SET PROPERTIES (who = 'one')")
    two.cursor().execute("ALTER TABLE ns.t SET PROPERTIES (who = 'two')")
    one.commit()
    with pytest.raises(errors.CommitConflictError) as info:
        two.commit()
    assert "ns.t" in str(info.value) and "version" in str(info.value)
    check = trinity_dbapi.connect(uri).cursor()
    check.execute("SELECT properties['who'] FROM system.tables WHERE table_name = 't'")
    assert check.fetchone() == ("one",)


def test_internal_error_for_a_corrupt_definition_file(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    path = conn.lakehouse.snapshot().get(
        next(k for k, _ in conn.lakehouse.snapshot().scan() if "t" in k and k != "ns")
    )
    assert path is not None
    target = Path(uri) / path
    target.write_bytes(b"\x00garbage")
    conn.lakehouse.storage.clear_cache()
    with pytest.raises(errors.InternalError):
        conn.cursor().execute("DESCRIBE ns.t")
    # nothing else was damaged: the namespace still lists
    assert ("ns",) in conn.cursor().execute("SHOW NAMESPACES").fetchall()


def test_programming_errors_name_the_object(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    with pytest.raises(errors.NoSuchTableError, match=r"ns\.nope"):
        cur.execute("SELECT * FROM ns.nope")
    with pytest.raises(errors.NoSuchNamespaceError, match="nowhere"):
        cur.execute("SHOW TABLES IN nowhere")
    with pytest.raises(errors.InvalidNameError):
        cur.execute('CREATE NAMESPACE "bad name"')
    with pytest.raises(errors.SQLSyntaxError) as info:
        cur.execute("SELEC 1")
    assert (info.value.line, info.value.column) == (1, 1) and info.value.text == "SELEC"


def test_not_supported_errors(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    with pytest.raises(errors.NotSupportedError):
        cur.execute("GRANT SELECT ON ns.t TO bob")
    with pytest.raises(errors.NotSupportedError):
        cur.execute("INSERT INTO ns.t VALUES (1) RETURNING *")


# fsspec's FTPFileSystem.__del__ fails after a failed __init__; not ours to fix.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(
    ("uri", "options", "error"),
    [
        (123, None, errors.ProgrammingError),
        ("", None, errors.InvalidURIError),
        ("ftp://host/x", None, errors.ProgrammingError),  # fsspec's own complaint, wrapped
        ("s3://bucket/x", {"no_such_option": 1}, errors.Error),
    ],
)
def test_connect_failures_stay_in_the_hierarchy(uri: object, options: object, error: type) -> None:
    with pytest.raises(error):
        trinity_dbapi.connect(uri, storage_options=options)  # type: ignore[arg-type]
