"""Secrets never show: not in messages, cause chains, tracebacks, reprs, logs or stderr.

Issue 14, item 13. Every public entry point that takes credentials is driven
into failures (a missing bucket, a closed port, an endpoint with user info,
a URI with user info) with secrets of awkward shapes, and everything a user
could see afterwards is searched for the secret and its encoded spellings.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import traceback
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest

import trinity_dbapi
from trinity_dbapi.storage.redact import Redactor, redact_userinfo, scrubbed

pytestmark = pytest.mark.s3

#: Secret shapes that broke or could break redaction.
SECRETS = {
    "slash": "wJalr/XUtnFEMI/K7MDENG",
    "at": "p@ss@word-Zq81",
    "colon": "pa:ss:wd-Zq82",
    "percent": "abc%2Fdef-Zq83",
    "plus": "ab+cd/ef=Zq84",
    "unicode": "päss/wörd€-Zq85",
    "long": "L" * 300 + "/tail-Zq86",
}

#: A port nothing listens on (connections are refused at once).
CLOSED = "http://127.0.0.1:1"


def _spellings(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), quote(secret, safe="/"), quote(secret, safe="@:/")}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def _visible(exc: BaseException) -> str:
    """Everything a user may see of ``exc``: messages, reprs and args of its chain, traceback."""
    parts = ["".join(traceback.format_exception(exc))]
    for error in _chain(exc):
        parts += [str(error), repr(error), *(repr(arg) for arg in error.args)]
        parts += [repr(value) for value in vars(error).values()]
    return "\n".join(parts)


def _assert_hidden(secret: str, *texts: str) -> None:
    for text in texts:
        for spelling in _spellings(secret):
            assert spelling not in text, f"secret shown as {spelling!r} in: {text[-2000:]}"


def _failure(work: Callable[[], Any]) -> BaseException:
    try:
        work()
    except Exception as exc:  # noqa: BLE001 - the failure is what is examined
        return exc
    pytest.fail("expected a failure")


def _no_retries(options: dict[str, Any]) -> dict[str, Any]:
    # One attempt, short timeouts: a closed port fails at once. Both layers:
    # botocore's retries, and s3fs's own (nested: 25 attempts, 12 s of backoff).
    config = {"retries": {"max_attempts": 1}, "connect_timeout": 2, "read_timeout": 2}
    return {**options, "config_kwargs": config, "retries": 1}


@pytest.fixture(params=sorted(SECRETS))
def secret(request: pytest.FixtureRequest) -> str:
    return SECRETS[request.param]


def _entry_points(secret: str, endpoint: str, bucket: str) -> dict[str, Callable[[], Any]]:
    missing = f"missing-{uuid.uuid4().hex[:12]}"
    return {
        "URI user info": lambda: trinity_dbapi.connect(f"s3://AKIDEXAMPLE:{secret}@{bucket}/lake"),
        "URI user info without //": lambda: trinity_dbapi.connect(f"s3:AKIDEXAMPLE:{secret}@b/x"),
        "secret, missing bucket": lambda: trinity_dbapi.connect(
            f"s3://{missing}/lake",
            storage_options={
                "key": "AKIDEXAMPLE",
                "secret": secret,
                "client_kwargs": {"endpoint_url": endpoint},
            },
        ),
        "secret, closed port": lambda: trinity_dbapi.connect(
            f"s3://{bucket}/lake",
            storage_options=_no_retries(
                {"key": "AKIDEXAMPLE", "secret": secret, "client_kwargs": {"endpoint_url": CLOSED}}
            ),
        ),
        "token, closed port": lambda: trinity_dbapi.connect(
            f"s3://{bucket}/lake",
            storage_options=_no_retries({"token": secret, "endpoint_url": CLOSED}),
        ),
        "endpoint with user info": lambda: trinity_dbapi.connect(
            f"s3://{bucket}/lake",
            storage_options=_no_retries(
                {"client_kwargs": {"endpoint_url": f"http://me:{secret}@127.0.0.1:1"}}
            ),
        ),
        # Without an endpoint s3fs asks AWS, which this machine cannot reach:
        # one attempt, or botocore's retries spend seconds on failing lookups.
        "bad option type": lambda: trinity_dbapi.connect(
            f"s3://{bucket}/lake",
            storage_options=_no_retries({"secret": secret, "key": 5, "anon": "x"}),
        ),
    }


@pytest.mark.parametrize(
    "entry",
    [
        "URI user info",
        "URI user info without //",
        "secret, missing bucket",
        "secret, closed port",
        "token, closed port",
        "endpoint with user info",
        "bad option type",
    ],
)
def test_connect_failures_never_show_the_secret(
    entry: str,
    secret: str,
    moto_server: str,
    s3_bucket: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG):
        exc = _failure(_entry_points(secret, moto_server, s3_bucket)[entry])
    assert isinstance(exc, trinity_dbapi.Error), _visible(exc)
    logs = "\n".join(record.getMessage() for record in caplog.records)
    _assert_hidden(secret, _visible(exc), logs)


def test_the_uri_user_info_is_refused_and_named_whatever_it_holds(secret: str) -> None:
    exc = _failure(lambda: trinity_dbapi.connect(f"s3://AKIDEXAMPLE:{secret}@bucket/lake"))
    assert isinstance(exc, trinity_dbapi.ProgrammingError)
    assert "carries user info" in str(exc)
    assert "s3://***@bucket/lake" in str(exc)


def test_sqlalchemy_engines_and_urls_hide_secrets(secret: str) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.engine import URL

    url = URL.create(
        "trinity",
        username="AKIDEXAMPLE",
        password=secret,
        database="memory://redaction-sa",
        query={
            "storage.token": secret,
            "storage.endpoint_url": f"http://me:{secret}@127.0.0.1:1",
        },
    )
    engine = sa.create_engine(url)
    _assert_hidden(secret, repr(engine), str(engine), repr(engine.url), str(engine.url))
    # Nothing lost: the full rendering still has it, and connecting works.
    # (How the password is escaped differs between SQLAlchemy 1.4 and 2.)
    assert "***" not in engine.url.render_as_string(hide_password=False)
    assert (engine.url.password, engine.url.query["storage.token"]) == (secret, secret)
    args = engine.dialect.create_connect_args(engine.url)[1]
    assert args["storage_options"]["secret"] == secret
    assert args["storage_options"]["key"] == "AKIDEXAMPLE"
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1
    engine.dispose()


def test_sqlalchemy_connect_failures_never_show_the_secret(
    secret: str, moto_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy.engine import URL

    url = URL.create(
        "trinity",
        database=f"s3://missing-{uuid.uuid4().hex[:12]}/lake",
        query={"storage.secret": secret, "storage.key": "AKIDEXAMPLE"},
    ).update_query_dict({"storage.client_kwargs": f'{{"endpoint_url": "{moto_server}"}}'})
    engine = sa.create_engine(url)
    with caplog.at_level(logging.DEBUG):
        exc = _failure(engine.connect)
    logs = "\n".join(record.getMessage() for record in caplog.records)
    _assert_hidden(secret, _visible(exc), logs, repr(engine))
    engine.dispose()


def _shell(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.cli", *args, "-c", "SELECT 1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("shape", ["slash", "at", "unicode"])
def test_the_shell_never_prints_the_secret(shape: str, moto_server: str) -> None:
    secret = SECRETS[shape]
    done = _shell(
        f"s3://missing-{uuid.uuid4().hex[:12]}/lake",
        "--storage-option",
        "key=AKIDEXAMPLE",
        "--storage-option",
        f"secret={secret}",
        "--storage-option",
        f"client_kwargs.endpoint_url={moto_server}",
    )
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ")
    _assert_hidden(secret, done.stdout, done.stderr)
    done = _shell(f"s3://AKIDEXAMPLE:{secret}@b/lake")
    assert done.returncode == 1
    assert "carries user info" in done.stderr
    _assert_hidden(secret, done.stdout, done.stderr)


def test_spark_options_hide_secrets_in_reprs_and_errors(secret: str) -> None:
    from trinity_dbapi.spark.options import parse_options

    options = parse_options(
        {"uri": "s3://bucket/lake", "path": "n.t", "storage.secret": secret, "storage.key": "AK"}
    )
    assert options.location.storage_options["secret"] == secret
    _assert_hidden(secret, repr(options), repr(options.location))
    exc = _failure(
        lambda: parse_options({"uri": "s3://b/l", "path": "n.t", "storageOptions": f'["{secret}"]'})
    )
    assert isinstance(exc, trinity_dbapi.ProgrammingError)
    _assert_hidden(secret, _visible(exc))


def test_reprs_of_connections_lakehouses_and_storages_hide_secrets(
    secret: str, s3_storage_options: dict[str, Any], s3_bucket: str
) -> None:
    options = {**s3_storage_options, "secret": secret}
    conn = trinity_dbapi.connect(f"s3://{s3_bucket}/lake", storage_options=options)
    try:
        texts = [repr(conn), repr(conn.lakehouse), repr(conn.lakehouse.storage)]
        texts.append(repr(conn.lakehouse.storage.redact))
    finally:
        conn.close()
    _assert_hidden(secret, *texts)


def test_redaction_finds_the_end_of_user_info_holding_slashes_and_ats() -> None:
    assert redact_userinfo("s3://AK:se/c@r@bucket/lake") == "s3://***@bucket/lake"
    assert redact_userinfo("at `http://u:p/w@h:9/x`") == "at `http://***@h:9/x`"
    # "@" in a path is not user info: a bucket or host holds no ":" before "/".
    assert redact_userinfo("s3://bucket/me@x/lake") == "s3://bucket/me@x/lake"
    assert redact_userinfo("file:///home/me@x/lake") == "file:///home/me@x/lake"


def test_a_scrubbed_cause_keeps_the_back_end_words_without_the_secret() -> None:
    redact = Redactor({"secret": "s3cr/et", "client_kwargs": {"endpoint_url": "http://u:pw9@h"}})
    try:
        try:
            raise ConnectionError("cannot reach http://u:pw9@h/b with s3cr%2Fet")
        except ConnectionError as inner:
            raise RuntimeError("signing with s3cr/et failed") from inner
    except RuntimeError as exc:
        stand_in = scrubbed(exc, redact)
    assert str(stand_in) == (
        "RuntimeError: signing with *** failed <- ConnectionError: cannot reach "
        "http://***@h/b with ***"
    )
    assert stand_in.__cause__ is None
    assert stand_in.__context__ is None


def test_secrets_inside_secret_names_and_credential_objects_are_known() -> None:
    """Everything under a secret's name is secret, text or not: nested options and the
    strings credential objects keep (azure-core's, google-auth's spellings)."""
    from types import SimpleNamespace

    from trinity_dbapi.storage.redact import Redactor

    named = SimpleNamespace(named_key=SimpleNamespace(name="acct", key="NAMED-KEY-123"))
    redact = Redactor(
        {
            "client_kwargs": {"credential": {"inner": "NESTED-123"}},
            "credential": named,
            "token": SimpleNamespace(token="BEARER-123", expiry=3600),
            "retries": 3,
        }
    )
    text = "NESTED-123 NAMED-KEY-123 BEARER-123 acct 3600"
    assert redact(text) == "*** *** *** acct 3600"
