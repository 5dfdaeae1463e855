"""Superset's engine spec never gives a database COPY file access.

Superset users send SQL, and a database's engine parameters (its
``connect_args``) are edited in Superset: ``file_access`` there would let
them read and write the server's files. The spec removes it and refuses the
connection, whether it comes from the extra or the encrypted extra.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from trinity_dbapi import errors
from trinity_dbapi.superset import TrinityEngineSpec


def test_connect_args_with_file_access_are_refused(tmp_path: Path) -> None:
    url = sa.engine.make_url(f"trinity:///{tmp_path / 'lake'}")
    connect_args = {"file_access": [str(tmp_path)], "read_only": True}
    with pytest.raises(errors.ProgrammingError, match="never gets file access"):
        TrinityEngineSpec.adjust_engine_params(url, connect_args, schema="s")
    assert connect_args == {"read_only": True}  # removed, even if the error were swallowed
    params = {"connect_args": {"file_access": "/"}}
    with pytest.raises(errors.ProgrammingError, match="remove file_access"):
        TrinityEngineSpec.update_params_from_encrypted_extra(None, params)  # type: ignore[arg-type]
    assert params == {"connect_args": {}}


def test_copy_through_the_specs_engine_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.csv").write_text("a\n1\n")
    url, connect_args = TrinityEngineSpec.adjust_engine_params(
        sa.engine.make_url(f"trinity:///{tmp_path / 'lake'}"), {}
    )
    engine = sa.create_engine(url, connect_args=connect_args)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE NAMESPACE s")
        conn.exec_driver_sql("CREATE TABLE s.t (a INT8)")
    with engine.connect() as conn:
        for sql in (
            f"COPY s.t FROM '{tmp_path}/secret.csv'",
            f"COPY (SELECT 1) TO '{tmp_path}/out.csv'",
        ):
            with pytest.raises(sa.exc.ProgrammingError) as caught:
                conn.exec_driver_sql(sql)
            assert isinstance(caught.value.orig, errors.FileAccessError)
            assert "this connection has no file access" in str(caught.value.orig)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lake", "secret.csv"]
    engine.dispose()
