"""A SQLAlchemy URL never grants COPY file access; only the application's code can.

``trinity:///path?file_access=...`` is an unknown URL option (an
``ArgumentError``): whoever can edit a URL (a BI tool's connection form)
cannot make the server's files readable. ``create_engine(url,
connect_args={"file_access": [...]})`` is the application's own decision,
as ``trinity_dbapi.connect(..., file_access=[...])`` is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from trinity_dbapi import errors


def test_a_url_cannot_grant_file_access(tmp_path: Path) -> None:
    url = f"trinity:///{tmp_path / 'lake'}?file_access={tmp_path}"
    with pytest.raises(sa.exc.ArgumentError, match="unknown trinity URL option 'file_access'"):
        sa.create_engine(url).connect()
    assert not (tmp_path / "lake").exists()


def test_an_engine_without_file_access_refuses_copy(tmp_path: Path) -> None:
    (tmp_path / "secret.csv").write_text("a\n1\n")
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE NAMESPACE s")
        conn.exec_driver_sql("CREATE TABLE s.t (a INT8)")
    with engine.connect() as conn:
        with pytest.raises(sa.exc.ProgrammingError) as caught:
            conn.exec_driver_sql(f"COPY s.t FROM '{tmp_path}/secret.csv'")
        assert isinstance(caught.value.orig, errors.FileAccessError)
        with pytest.raises(sa.exc.ProgrammingError):
            conn.exec_driver_sql(f"COPY s.t TO '{tmp_path}/out.csv'")
        assert conn.exec_driver_sql("SELECT count(*) FROM s.t").scalar() == 0
    assert not (tmp_path / "out.csv").exists()
    engine.dispose()


def test_connect_args_are_the_applications_grant(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    engine = sa.create_engine(
        f"trinity:///{tmp_path / 'lake'}", connect_args={"file_access": [str(folder)]}
    )
    with engine.begin() as conn:
        conn.exec_driver_sql("COPY (SELECT 42 AS answer) TO ?", (str(folder / "a.csv"),))
    assert (folder / "a.csv").read_text() == '"answer"\n42\n'
    engine.dispose()
