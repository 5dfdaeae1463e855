"""GCS credentials never show: a service-account key, a token, an endpoint's user info.

The checks of test_redaction.py for the options a GCS user passes: ``token``
as a service account's JSON (its ``private_key`` the secret), as a string,
and an ``endpoint_url`` with user info; driven into failures (a missing
bucket on the emulator, a closed port) and into reprs and logs.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

import pytest

import trinity_dbapi
from tests import emulators
from tests.storage.test_redaction import CLOSED, SECRETS, _assert_hidden, _failure, _visible
from trinity_dbapi.storage import open_storage

pytestmark = pytest.mark.gcs


@pytest.fixture(params=sorted(SECRETS))
def secret(request: pytest.FixtureRequest) -> str:
    return SECRETS[request.param]


def _service_account(secret: str) -> dict[str, str]:
    return {
        "type": "service_account",
        "project_id": "trinity-tests",
        "private_key_id": "0123456789abcdef",
        "private_key": f"-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----\n",
        "client_email": "writer@trinity-tests.iam.gserviceaccount.com",
        "token_uri": f"{CLOSED}/token",
    }


def _entries(secret: str, endpoint: str) -> dict[str, Callable[[], Any]]:
    missing = f"missing-{uuid.uuid4().hex[:12]}"
    return {
        "service account, emulator": lambda: trinity_dbapi.connect(
            f"gs://{missing}/lake",
            storage_options={"endpoint_url": endpoint, "token": _service_account(secret)},
        ),
        "service account, closed port": lambda: trinity_dbapi.connect(
            f"gs://{missing}/lake",
            storage_options={"endpoint_url": CLOSED, "token": _service_account(secret)},
        ),
        "token, closed port": lambda: trinity_dbapi.connect(
            f"gs://{missing}/lake", storage_options={"endpoint_url": CLOSED, "token": secret}
        ),
    }


@pytest.mark.parametrize(
    "entry",
    [
        "service account, emulator",
        "service account, closed port",
        "token, closed port",
    ],
)
def test_gcs_connect_failures_never_show_the_secret(
    entry: str, secret: str, gcs_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        exc = _failure(_entries(secret, gcs_server)[entry])
    assert isinstance(exc, trinity_dbapi.Error), _visible(exc)
    logs = "\n".join(record.getMessage() for record in caplog.records)
    _assert_hidden(secret, _visible(exc), logs)


@pytest.mark.parametrize("shape", ["colon", "percent", "at"])
def test_an_endpoint_with_user_info_never_shows_it(
    shape: str, gcs_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Shapes a URL keeps as user info, so the request reaches the emulator and
    # fails on the missing bucket at once (gcsfs retries a connection that
    # cannot be made six times over 30 s; other shapes: test_redaction.py).
    secret = SECRETS[shape]
    endpoint = gcs_server.replace("http://", f"http://me:{secret}@")
    with caplog.at_level(logging.DEBUG):
        exc = _failure(
            lambda: trinity_dbapi.connect(
                f"gs://missing-{uuid.uuid4().hex[:12]}/lake",
                storage_options={"endpoint_url": endpoint, "token": "anon"},
            )
        )
    assert isinstance(exc, trinity_dbapi.Error), _visible(exc)
    logs = "\n".join(record.getMessage() for record in caplog.records)
    _assert_hidden(secret, _visible(exc), logs)


def test_gcs_storages_hide_the_secret_in_reprs(gcs_server: str) -> None:
    secret = SECRETS["slash"]
    options = {**emulators.gcs_options(gcs_server), "token": "anon", "password": secret}
    storage = open_storage(
        f"gs://{emulators.create_gcs_bucket(gcs_server)}/lake", storage_options=options
    )
    failure = storage.redact.scrubbed(ValueError(f"it said {secret}"))
    assert str(failure) == "ValueError: it said ***"
    _assert_hidden(secret, repr(storage), storage.cache_identity)
