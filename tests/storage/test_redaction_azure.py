"""Azure credentials never show: an account key, a SAS token, a connection string, a client secret.

The checks of test_redaction.py (and test_redaction_gcs.py) for the options an
Azure user passes to adlfs: ``account_key``, ``sas_token``, a
``connection_string`` holding an ``AccountKey`` or a ``SharedAccessSignature``,
and a service principal's ``client_secret``; driven into failures (a missing
container and a missing file on Azurite, a key or a signature Azurite
refuses, a closed port, an identity endpoint that refuses connections) and
into reprs and logs (every logger at DEBUG: ``azure.*`` logs each request).

The Azure SDK retries a refused connection three times with 2 to 4 s of
backoff each time, and the identity client's retries nest inside; the tests
that reach a closed port make the backoff zero (:func:`no_backoff`), so each
fails at once after the same requests.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import logging
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import quote

import pytest

import trinity_dbapi
from tests import emulators
from tests.storage.test_redaction import CLOSED, SECRETS, _assert_hidden, _failure, _visible
from trinity_dbapi.storage import open_storage

pytestmark = pytest.mark.azure

#: An account key of the right form (base64 of 64 bytes, with "+" and "/")
#: that is not the emulator's: the SDK signs with it and Azurite refuses it.
WRONG_KEY = base64.b64encode(b"\xfb\xff\xbf" + hashlib.sha512(b"trinity").digest()[:61]).decode()

#: A service principal's secret (the shape Entra ID issues: ~ . _ - and letters).
CLIENT_SECRET = "Zq8~Q.clientSecret_x-Y1aB2cD3eF4gH5iJ6kL7"

#: Entra ID (where a client secret is sent for a token) on a port nothing listens on;
#: another address than the storage's closed port, so messages tell which failed.
CLOSED_AUTHORITY = "https://127.0.0.2:1"

#: A blob endpoint whose URL aiohttp refuses (its message repeats the request URL).
BAD_PORT = f"http://127.0.0.1:x/{emulators.AZURITE_ACCOUNT}"

SERVICE_PRINCIPAL = {
    "client_id": "00000000-0000-0000-0000-0000000000c1",
    "tenant_id": "00000000-0000-0000-0000-0000000000d1",
}


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Azure SDK's retries without their backoff: a closed port fails at once."""
    from azure.core.pipeline.policies import _retry
    from azure.storage.blob._shared import policies, policies_async

    for cls in (
        policies_async.ExponentialRetry,
        policies_async.LinearRetry,
        policies.ExponentialRetry,
        policies.LinearRetry,
        _retry.RetryPolicyBase,
    ):
        monkeypatch.setattr(cls, "get_backoff_time", lambda self, settings: 0)


def _connection_string(endpoint: str, *, key: str | None = None, sas: str | None = None) -> str:
    """An Azure connection string with an ``AccountKey`` or a ``SharedAccessSignature``."""
    if sas is not None:
        return f"BlobEndpoint={endpoint};SharedAccessSignature={sas}"
    return (
        f"DefaultEndpointsProtocol=http;AccountName={emulators.AZURITE_ACCOUNT};"
        f"AccountKey={key};BlobEndpoint={endpoint};"
    )


def _valid_sas() -> str:
    """An account SAS token Azurite accepts (signed with its development key)."""
    from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas

    return generate_account_sas(
        emulators.AZURITE_ACCOUNT,
        emulators.AZURITE_KEY,
        ResourceTypes(service=True, container=True, object=True),
        AccountSasPermissions(read=True, write=True, list=True, create=True, delete=True),
        expiry=datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1),
    )


def _wrong_sas(signature: str) -> str:
    """A SAS token of the right form whose signature Azurite refuses."""
    return (
        "sv=2023-11-03&ss=b&srt=sco&sp=rl&se=2099-01-01T00%3A00%3A00Z&spr=https%2Chttp"
        f"&sig={quote(signature, safe='')}"
    )


def _signature(sas: str) -> str:
    """The ``sig`` of a SAS token, decoded: the secret part."""
    from urllib.parse import parse_qs

    return parse_qs(sas)["sig"][0]


def _missing() -> str:
    return f"missing-{uuid.uuid4().hex[:12]}"


def _read_missing_file(uri: str, options: dict[str, Any]) -> Any:
    storage = open_storage(uri, storage_options=options)
    try:
        return storage.read(f"{_missing()}.parquet")
    finally:
        storage.close()


def _cases(endpoint: str, container: str) -> dict[str, tuple[str, str, Callable[[], Any]]]:
    """Failure name -> (the secret, what the message says, what fails), per kind of credential.

    What the message says pins the failure to the path the case means to
    take (the store's answer, the closed port, the identity endpoint, ...).
    """
    closed = f"{CLOSED}/{emulators.AZURITE_ACCOUNT}"
    valid_sas = _valid_sas()
    wrong_sas = _wrong_sas(WRONG_KEY)
    on_closed_host = {"account_name": emulators.AZURITE_ACCOUNT, "account_host": "127.0.0.1:1"}
    return {
        # The key Azurite accepts: the failure is the store's answer.
        "account key, missing container": (
            emulators.AZURITE_KEY,
            "container does not exist",
            lambda: trinity_dbapi.connect(
                f"abfs://{_missing()}/lake",
                storage_options={
                    "connection_string": _connection_string(endpoint, key=emulators.AZURITE_KEY)
                },
            ),
        ),
        "account key, missing file": (
            emulators.AZURITE_KEY,
            "does not exist",
            lambda: _read_missing_file(
                f"abfs://{container}/lake",
                {"connection_string": _connection_string(endpoint, key=emulators.AZURITE_KEY)},
            ),
        ),
        "account key, refused": (
            WRONG_KEY,
            "failed to authenticate",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={"connection_string": _connection_string(endpoint, key=WRONG_KEY)},
            ),
        ),
        "account key, closed port": (
            WRONG_KEY,
            "127.0.0.1:1",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={"connection_string": _connection_string(closed, key=WRONG_KEY)},
            ),
        ),
        "account key option, no account in the host": (
            WRONG_KEY,
            "account name",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={**on_closed_host, "account_key": WRONG_KEY},
            ),
        ),
        # A SAS travels in every request's URL.
        "SAS, missing container": (
            _signature(valid_sas),
            "container does not exist",
            lambda: trinity_dbapi.connect(
                f"abfs://{_missing()}/lake",
                storage_options={"connection_string": _connection_string(endpoint, sas=valid_sas)},
            ),
        ),
        "SAS, missing file": (
            _signature(valid_sas),
            "does not exist",
            lambda: _read_missing_file(
                f"abfs://{container}/lake",
                {"connection_string": _connection_string(endpoint, sas=valid_sas)},
            ),
        ),
        "SAS, refused": (
            WRONG_KEY,
            "failed to authenticate",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={"connection_string": _connection_string(endpoint, sas=wrong_sas)},
            ),
        ),
        "SAS option, closed port": (
            WRONG_KEY,
            "127.0.0.1:1",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={**on_closed_host, "sas_token": wrong_sas},
            ),
        ),
        # aiohttp refuses the URL and says it, SAS and all.
        "SAS, endpoint with a bad port": (
            WRONG_KEY,
            "Invalid URL",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={"connection_string": _connection_string(BAD_PORT, sas=wrong_sas)},
            ),
        ),
        "SAS option, host with a bad port": (
            WRONG_KEY,
            "Invalid URL",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={
                    "account_name": emulators.AZURITE_ACCOUNT,
                    "account_host": "127.0.0.1:x",
                    "sas_token": wrong_sas,
                },
            ),
        ),
        # A client secret goes to Entra ID for a token before any storage request.
        "client secret, closed identity endpoint": (
            CLIENT_SECRET,
            "127.0.0.2:1",
            lambda: trinity_dbapi.connect(
                f"abfs://{container}/lake",
                storage_options={
                    **on_closed_host,
                    **SERVICE_PRINCIPAL,
                    "client_secret": CLIENT_SECRET,
                },
            ),
        ),
    }


def _logs(caplog: pytest.LogCaptureFixture) -> str:
    """Every record's message and formatted traceback."""
    return "\n".join([caplog.text, *(record.getMessage() for record in caplog.records)])


#: The failures of :func:`_cases`, one test each.
CASES = [
    "account key, missing container",
    "account key, missing file",
    "account key, refused",
    "account key, closed port",
    "account key option, no account in the host",
    "SAS, missing container",
    "SAS, missing file",
    "SAS, refused",
    "SAS option, closed port",
    "SAS, endpoint with a bad port",
    "SAS option, host with a bad port",
    "client secret, closed identity endpoint",
]


def test_every_failure_case_runs() -> None:
    assert sorted(CASES) == sorted(_cases("http://127.0.0.1:1/devstoreaccount1", "c"))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.usefixtures("no_backoff")
def test_azure_failures_never_show_the_secret(
    case: str,
    azure_server: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AZURE_AUTHORITY_HOST", CLOSED_AUTHORITY)
    container = emulators.create_azure_container(azure_server)
    secret, says, work = _cases(azure_server, container)[case]
    with caplog.at_level(logging.DEBUG):
        exc = _failure(work)
    assert isinstance(exc, trinity_dbapi.Error), _visible(exc)
    assert says in str(exc), str(exc)
    _assert_hidden(secret, _visible(exc), _logs(caplog))


#: Where each kind of credential of :func:`test_secrets_of_any_shape_never_show` fails.
SAYS = {
    "account key": ("AzureSigningError", "Server failed to authenticate"),
    "SAS": ("InvalidUrlClientError",),
    "client secret": ("Cannot connect to host 127.0.0.2",),
}


@pytest.mark.usefixtures("no_backoff")
def test_secrets_of_any_shape_never_show(
    azure_server: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Secrets of the awkward shapes of test_redaction.py, as keys, signatures and client secrets.

    None of them is base64: the SDK fails to sign with such a key. A SAS
    goes to an endpoint whose URL aiohttp refuses, repeating it (signature
    included) in its message; a client secret to an identity endpoint that
    refuses the connection.
    """
    monkeypatch.setenv("AZURE_AUTHORITY_HOST", CLOSED_AUTHORITY)
    uri = f"abfs://{emulators.create_azure_container(azure_server)}/lake"
    for shape, secret in sorted(SECRETS.items()):
        failures: dict[str, dict[str, Any]] = {
            "account key": {"connection_string": _connection_string(azure_server, key=secret)},
            "SAS": {"connection_string": _connection_string(BAD_PORT, sas=_wrong_sas(secret))},
            "client secret": {
                "account_name": emulators.AZURITE_ACCOUNT,
                "account_host": "127.0.0.1:1",
                **SERVICE_PRINCIPAL,
                "client_secret": secret,
            },
        }
        for kind, options in failures.items():
            caplog.clear()
            with caplog.at_level(logging.DEBUG):
                exc = _failure(partial(trinity_dbapi.connect, uri, storage_options=options))
            assert isinstance(exc, trinity_dbapi.Error), (shape, kind, _visible(exc))
            # Each kind failed where it was meant to: the key in the signing (or at
            # the store), the SAS in the URL aiohttp refused, the client secret
            # at the identity endpoint; not at some earlier check of the options.
            assert any(what in str(exc) for what in SAYS[kind]), (shape, kind, str(exc))
            try:
                _assert_hidden(secret, _visible(exc), _logs(caplog))
            except AssertionError as failed:
                raise AssertionError(f"{kind}, shape {shape}: {failed}") from None


@pytest.mark.usefixtures("no_backoff")
def test_a_sas_credential_object_never_shows() -> None:
    from azure.core.credentials import AzureSasCredential

    sas = _wrong_sas(WRONG_KEY)
    exc = _failure(
        lambda: trinity_dbapi.connect(
            "abfs://sales/lake",
            storage_options={
                "account_name": emulators.AZURITE_ACCOUNT,
                "account_host": "127.0.0.1:x",
                "credential": AzureSasCredential(sas),
            },
        )
    )
    assert "Invalid URL" in str(exc), str(exc)
    _assert_hidden(WRONG_KEY, _visible(exc))


def test_azure_storages_hide_every_secret_in_reprs(azure_server: str) -> None:
    container = emulators.create_azure_container(azure_server)
    sas = _valid_sas()
    options = {
        "connection_string": _connection_string(azure_server, key=emulators.AZURITE_KEY),
        "account_key": WRONG_KEY,
        "sas_token": sas,
        "client_secret": CLIENT_SECRET,
    }
    secrets = [emulators.AZURITE_KEY, WRONG_KEY, _signature(sas), CLIENT_SECRET]
    uri = f"abfs://{container}/lake"
    storage = open_storage(uri, storage_options=options)
    conn = trinity_dbapi.connect(uri, storage_options=options)
    try:
        texts = [repr(storage), storage.cache_identity, repr(storage.redact), repr(storage.fs)]
        texts += [repr(conn), repr(conn.lakehouse), repr(conn.lakehouse.storage)]
        for secret in secrets:
            failure = storage.redact.scrubbed(ValueError(f"it said {secret}"))
            assert str(failure) == "ValueError: it said ***"
            _assert_hidden(secret, *texts)
        # The whole connection string and SAS token are secrets too, not only their parts.
        scrubbed = storage.redact(f"{options['connection_string']} {sas}")
        assert scrubbed == "*** ***", scrubbed
    finally:
        conn.close()
        storage.close()


# -- SQLAlchemy URLs ---------------------------------------------------------------------

#: A GCS service account's key, given as ``storage.token`` (its JSON) in a URL.
PRIVATE_KEY = "Zq8/privateKey+body"
#: A credential nested in a JSON option (``storage.client_kwargs``).
NESTED_CREDENTIAL = "Zq8nestedCredential"


def test_sqlalchemy_urls_hide_azure_and_gcs_credentials() -> None:
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.engine import URL

    sas = _wrong_sas(WRONG_KEY)
    service_account = {
        "type": "service_account",
        "private_key": f"-----BEGIN PRIVATE KEY-----\n{PRIVATE_KEY}\n-----END PRIVATE KEY-----\n",
        "client_email": "reader@trinity-tests.iam.gserviceaccount.com",
    }
    url = URL.create(
        "trinity",
        database="abfss://sales@myaccount.dfs.core.windows.net/lake",
        query={
            "storage.connection_string": _connection_string(CLOSED, key=WRONG_KEY),
            "storage.account_key": WRONG_KEY,
            "storage.sas_token": sas,
            "storage.client_secret": CLIENT_SECRET,
            "storage.client_id": SERVICE_PRINCIPAL["client_id"],
            "storage.token": json.dumps(service_account),
            "storage.client_kwargs": json.dumps(
                {"credential": NESTED_CREDENTIAL, "region_name": "west"}
            ),
        },
    )
    engine = sa.create_engine(url)
    shown = [repr(engine), str(engine), repr(engine.url), str(engine.url)]
    secrets = [WRONG_KEY, _signature(sas), CLIENT_SECRET, PRIVATE_KEY, NESTED_CREDENTIAL]
    for secret in secrets:
        _assert_hidden(secret, *shown)
    # What is no credential stays: the account in Hadoop's form, the client id,
    # the other keys of a JSON option.
    assert "sales%40myaccount.dfs.core.windows.net" in repr(engine.url)
    assert f"storage.client_id={SERVICE_PRINCIPAL['client_id']}" in repr(engine.url)
    assert "region_name" in repr(engine.url)
    # Nothing lost: the dialect connects with every value.
    options = engine.dialect.create_connect_args(engine.url)[1]["storage_options"]
    assert options["account_key"] == WRONG_KEY
    assert options["sas_token"] == sas
    assert options["token"] == service_account
    assert options["client_kwargs"]["credential"] == NESTED_CREDENTIAL
    # A URL the dialect refuses is named in its message, hidden the same way.
    exc = _failure(lambda: sa.create_engine(url.set(host="somewhere")))
    assert "has a host part" in str(exc)
    for secret in secrets:
        _assert_hidden(secret, _visible(exc))
    engine.dispose()


@pytest.mark.usefixtures("no_backoff")
def test_sqlalchemy_connect_failures_never_show_the_secret(
    azure_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.engine import URL

    uri = f"abfs://{emulators.create_azure_container(azure_server)}/lake"
    failures = {
        "failed to authenticate": (
            WRONG_KEY,
            {"storage.connection_string": _connection_string(azure_server, key=WRONG_KEY)},
        ),
        "Invalid URL": (
            WRONG_KEY,
            {"storage.connection_string": _connection_string(BAD_PORT, sas=_wrong_sas(WRONG_KEY))},
        ),
    }
    for says, (secret, query) in failures.items():
        engine = sa.create_engine(URL.create("trinity", database=uri, query=query))
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            exc = _failure(engine.connect)
        assert says in str(exc), str(exc)
        _assert_hidden(secret, _visible(exc), _logs(caplog), repr(engine))
        engine.dispose()
