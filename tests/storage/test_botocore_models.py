"""botocore's parsed models, cached on disk: the same models, trusted only when they should be."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

botocore = pytest.importorskip("botocore")

from botocore.loaders import JSONFileLoader, Loader

from trinity_dbapi.storage import botocore_models

MODELS = ("endpoints", "partitions", "s3/2006-03-01/service-2", "s3/2006-03-01/endpoint-rule-set-1")


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    monkeypatch.delenv("TRINITY_DBAPI_BOTOCORE_CACHE", raising=False)
    monkeypatch.setattr(Loader, "CUSTOMER_DATA_PATH", str(tmp_path / "no-models-here"))
    return tmp_path


def _session() -> Any:
    import botocore.session

    return botocore.session.Session()


def _cached_loader() -> Any:
    session = _session()
    assert botocore_models.install(session)
    return session.get_component("data_loader")


def _parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each JSON file botocore parses from here on."""
    parsed: list[str] = []
    original = JSONFileLoader._load_file

    def load(self: Any, full_path: str, open_method: Any) -> Any:
        found = original(self, full_path, open_method)
        if found is not None:
            parsed.append(os.path.basename(full_path))
        return found

    monkeypatch.setattr(JSONFileLoader, "_load_file", load)
    return parsed


def test_the_cached_models_are_botocores_in_the_same_order(cache_home: Path) -> None:
    stock = Loader()
    for _ in range(2):  # a miss (parsed and written), then a hit (read back)
        loader = _cached_loader()
        for name in MODELS:
            assert json.dumps(loader.load_data(name)) == json.dumps(stock.load_data(name))
        assert loader.list_available_services("service-2") == stock.list_available_services(
            "service-2"
        )
    assert len(list((cache_home / "trinity-dbapi").glob("botocore-*/*.marshal"))) >= len(MODELS)


def test_a_client_made_from_the_cache_is_the_same_client(cache_home: Path) -> None:
    def client(cached: bool) -> Any:
        session = _session()
        if cached:
            botocore_models.install(session)
        return session.create_client(
            "s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
        )

    stock, first, second = client(False), client(True), client(True)
    for made in (first, second):
        assert made.meta.service_model.operation_names == stock.meta.service_model.operation_names
        shape = made.meta.service_model.operation_model("PutObject").input_shape
        expected = stock.meta.service_model.operation_model("PutObject").input_shape
        assert list(shape.members) == list(expected.members)
        request = made.generate_presigned_url("get_object", {"Bucket": "b", "Key": "k"})
        assert (
            request.split("?")[0]
            == stock.generate_presigned_url("get_object", {"Bucket": "b", "Key": "k"}).split("?")[0]
        )


def test_a_new_process_reads_the_cache_instead_of_the_json(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cached_loader().load_service_model("s3", "service-2")
    parsed = _parsed(monkeypatch)
    model = _cached_loader().load_service_model("s3", "service-2")  # a new session's loader
    assert model["metadata"]["endpointPrefix"] == "s3"
    assert parsed == []


@pytest.mark.parametrize("damage", ["flip", "truncate", "others_may_write", "stale_stamp"])
def test_a_damaged_or_untrusted_entry_is_parsed_again(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    expected = json.dumps(Loader().load_data("endpoints"))
    _cached_loader().load_data("endpoints")
    (entry,) = (cache_home / "trinity-dbapi").glob("botocore-*/endpoints.json.marshal")
    blob = entry.read_bytes()
    if damage == "flip":
        entry.write_bytes(blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:])
    elif damage == "truncate":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "others_may_write":
        entry.chmod(0o666)
    else:  # written for a botocore file that has changed since
        start = len(botocore_models._MAGIC) + botocore_models._HEAD.size
        _, length = botocore_models._HEAD.unpack_from(blob, len(botocore_models._MAGIC))
        entry.unlink()
        botocore_models._write(entry.parent, entry, b"another stamp", blob[start + length :])
    parsed = _parsed(monkeypatch)
    assert json.dumps(_cached_loader().load_data("endpoints")) == expected
    assert parsed == ["endpoints.json"]


def test_the_users_own_models_turn_the_cache_off(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    models.mkdir()
    monkeypatch.setattr(Loader, "CUSTOMER_DATA_PATH", str(models))
    assert not botocore_models.install(_session())
    monkeypatch.setattr(Loader, "CUSTOMER_DATA_PATH", str(tmp_path / "absent"))
    monkeypatch.setenv("AWS_DATA_PATH", str(models))
    assert not botocore_models.install(_session())


def test_the_cache_can_be_turned_off(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRINITY_DBAPI_BOTOCORE_CACHE", "0")
    assert not botocore_models.install(_session())


def test_no_cache_folder_costs_only_the_speed_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_home: Path
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    loader = _cached_loader()
    assert loader.load_service_model("s3", "service-2")["metadata"]["endpointPrefix"] == "s3"
    assert blocked.read_text() == "not a folder"


def test_an_s3_storage_reads_models_through_the_cache(
    s3_bucket: str, s3_storage_options: dict[str, Any], cache_home: Path
) -> None:
    from trinity_dbapi.storage import s3

    options = {**s3_storage_options, "skip_instance_cache": True}  # a session of its own
    storage = s3.S3Storage(f"s3://{s3_bucket}/lake", storage_options=options, cache_bytes=0)
    storage.write("a.txt", b"hello")
    assert storage.read("a.txt") == b"hello"
    loader = storage.fs.session.get_component("data_loader")
    assert type(loader).__name__ == "CachingLoader"
    assert list((cache_home / "trinity-dbapi").glob("botocore-*/s3__*service-2*.marshal"))
