"""``connect(..., file_access=[...])``: the directories COPY may use, checked on connect.

COPY itself is tested in tests/sql/engine/test_copy.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import trinity_dbapi
from trinity_dbapi import errors


def test_the_allowed_directories_are_checked_on_connect(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    for bad, problem in [
        ("s3://bucket", "not a local directory path"),
        (str(tmp_path / "missing"), "not an existing directory"),
        (42, "not a path"),
    ]:
        with pytest.raises(errors.ProgrammingError, match=problem):
            trinity_dbapi.connect(uri, file_access=[bad])
    with pytest.raises(errors.ProgrammingError, match="must be a list of directories"):
        trinity_dbapi.connect(uri, file_access=42)  # type: ignore[arg-type]
    assert not (tmp_path / "lake").exists()
    (tmp_path / "d").mkdir()
    (tmp_path / "l").symlink_to(tmp_path / "d")
    with trinity_dbapi.connect(uri, file_access=str(tmp_path / "l")) as conn:
        assert conn.session.file_access == (str(tmp_path / "d"),)  # its real path


def test_file_access_is_named_among_the_options(tmp_path: Path) -> None:
    with pytest.raises(errors.ProgrammingError, match="file_access"):
        trinity_dbapi.connect(str(tmp_path / "lake"), file_acess=[str(tmp_path)])
    assert not (tmp_path / "lake").exists()
