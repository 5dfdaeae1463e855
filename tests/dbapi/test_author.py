"""``connect(..., author=...)``: who commits through a connection, recorded with each version."""

from __future__ import annotations

from pathlib import Path

import pytest

import trinity_dbapi
from trinity_dbapi import errors

AUTHORS = "SELECT version, author FROM system.versions ORDER BY version"


def test_every_version_a_connection_makes_records_its_author(tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")  # not created yet: the first write creates it
    ana = trinity_dbapi.connect(lake, autocommit=True, author="Ana María <ana@example.com>")
    assert ana.author == "Ana María <ana@example.com>"
    ana.execute("CREATE NAMESPACE sales")
    nobody = trinity_dbapi.connect(lake, autocommit=True)
    assert nobody.author is None
    nobody.execute("CREATE NAMESPACE scratch")
    assert nobody.execute(AUTHORS).fetchall() == [
        (0, None),
        (1, "Ana María <ana@example.com>"),
        (2, None),
    ]
    ana.close()
    nobody.close()


@pytest.mark.parametrize(
    ("author", "error", "message"),
    [
        (7, errors.ProgrammingError, "the author must be a str or None, not int"),
        (b"ana", errors.ProgrammingError, "the author must be a str or None, not bytes"),
        ("", errors.DataError, "the author is empty: give a non-empty string, or None"),
        ("ana\nbo", errors.DataError, r"holds '\\n' at position 3.*\(it is one line\); remove it"),
        ("ana\t", errors.DataError, r"holds '\\t' at position 3"),
        ("a" * 257, errors.DataError, "257 bytes of UTF-8, over the 256 a version records"),
    ],
)
def test_a_bad_author_is_refused_before_anything_opens(
    tmp_path: Path, author: object, error: type[Exception], message: str
) -> None:
    lake = tmp_path / "lake"
    with pytest.raises(error, match=message):
        trinity_dbapi.connect(str(lake), create=True, author=author)  # type: ignore[arg-type]
    assert not lake.exists()  # nothing was created


def test_unknown_options_name_author_among_the_options() -> None:
    with pytest.raises(
        errors.ProgrammingError, match="file_access, author, branch and the lakehouse"
    ):
        trinity_dbapi.connect("memory://author-options", authr="ana")
