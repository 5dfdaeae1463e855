"""Keeping credentials out of messages, exception chains, reprs and logs.

Credentials reach trinity-dbapi in storage options (``key``, ``secret``,
``token``, an ``endpoint_url`` with user info, ...) and, by mistake, in the
user info of a root URI. Back ends echo them back: botocore puts the
endpoint URL in its messages, fsspec repeats options, and a traceback shows
every exception of the chain, not only the one trinity-dbapi raised. So:

* :class:`Redactor` knows the secret values of one set of storage options and
  replaces them, and the spellings they take on the way (percent-encoded,
  escaped), by ``***`` in any text; :func:`redact_userinfo` hides the user
  info of every URL in a text.
* :func:`scrubbed` turns a foreign exception into a stand-in
  (:class:`RedactedCause`) that keeps its type name and redacted message and
  nothing else: errors raised ``from`` it carry what helps (the back end's
  own words) without the objects that hold the secret.

Imports from storage/: nothing.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, unquote

#: Option name parts whose values are secrets.
SECRET_WORDS = (
    "secret",
    "key",
    "token",
    "password",
    "credential",
    "sas",
    "auth",
    "signature",
    "connection_string",
)

#: The replacement of a secret in a message.
MASK = "***"

# "scheme://user:password@host": the user info ends at the last "@" before the
# host (a secret may contain "/", ":" and "@"; a host may not). A path may hold
# "@" too ("s3://bucket/me@x/lake"): see _is_userinfo.
_URL_USERINFO_RE = re.compile(
    r"([A-Za-z][A-Za-z0-9+.\-]*://)([^\s/'\"`<>][^\s'\"`<>]*)@(?=[^\s/@'\"`<>])"
)


class RedactedCause(Exception):
    """A back end's exception, reduced to its type name and redacted message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind


#: Loggers (and their children) of the libraries that carry credentials for us;
#: their records are redacted (see :func:`_install_log_redaction`).
REDACTED_LOGGERS = (
    "trinity_dbapi",
    "botocore",
    "aiobotocore",
    "boto3",
    "s3fs",
    "fsspec",
    "gcsfs",
    "adlfs",
    "azure",
    "urllib3",
    "aiohttp",
    "requests",
    "httpx",
)

#: The redactors of the storages alive: their secrets are kept out of log records.
_LIVE: weakref.WeakSet[Redactor] = weakref.WeakSet()
_INSTALL_LOCK = threading.Lock()
_installed = False


class Redactor:
    """Replaces the secret values of storage options (and a URI's user info) by ``***``.

    Args:
        storage_options: the options, nested dicts included; values of keys
            naming a secret (:data:`SECRET_WORDS`) are secrets, and so is the
            user info of any option value that is a URL.
        extra: further secrets (a root URI's user info, ...).
    """

    def __init__(self, storage_options: Mapping[str, Any] | None = None, extra: Any = ()) -> None:
        found = set(_secret_values(storage_options or {}))
        found.update(s for s in extra if isinstance(s, str) and s)
        spellings = set()
        for secret in found:
            spellings.update(_spellings(secret))
        # Longest first: a secret that contains another is replaced whole.
        self.secrets = sorted((s for s in spellings if len(s) >= 3), key=len, reverse=True)
        if self.secrets:
            _LIVE.add(self)
            _install_log_redaction()

    def __repr__(self) -> str:
        return f"<Redactor of {len(self.secrets)} spellings>"

    def __call__(self, text: str) -> str:
        """``text`` with every secret and every URL's user info replaced by ``***``."""
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return redact_userinfo(text)

    def scrubbed(self, exc: BaseException) -> RedactedCause:
        """A stand-in for ``exc`` to raise ``from``: its type name and redacted message."""
        return scrubbed(exc, self)


def redact_userinfo(text: str) -> str:
    """Hide the user info of every ``scheme://user:password@host`` URL in ``text``.

    What comes before the ``@`` is user info when it holds no ``/`` or when
    its first ``/``-separated part holds a ``:`` (``key:se/cret``): a bucket
    or host name never holds ``:`` before a ``/``, a user name and password
    always do. ``s3://bucket/me@x/lake`` is left alone.
    """
    return _URL_USERINFO_RE.sub(_mask_userinfo, text)


def _mask_userinfo(match: re.Match[str]) -> str:
    if not _is_userinfo(match.group(2)) or _is_azure_container(match):
        return match.group(0)
    return f"{match.group(1)}{MASK}@"


def _is_userinfo(candidate: str) -> bool:
    first, slash, _ = candidate.partition("/")
    return not slash or ":" in first


#: The schemes of Azure Blob Storage / ADLS Gen2 root URIs.
AZURE_SCHEMES = frozenset({"abfs", "abfss", "az"})

# Hadoop's Azure authority "<container>@<account>.(dfs|blob).core.windows.net":
# before the "@" is a container name (3-63 of a-z, 0-9, "-"), not a credential.
_AZURE_AUTHORITY_RE = re.compile(
    r"(?P<container>[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])?)"
    r"@(?P<account>[a-z0-9]{3,24})\.(?:dfs|blob)\.core\.windows\.net"
)
_HOST_RE = re.compile(r"[^/\s'\"`<>]*")


def azure_account(scheme: str, authority: str) -> str | None:
    """The storage account of Hadoop's Azure authority ``<container>@<account>.dfs.core.windows.net``.

    None unless ``scheme`` is an Azure one and ``authority`` has that form
    (the one ``@`` a root URI may hold: it carries no credential).
    """
    if scheme.lower() not in AZURE_SCHEMES:
        return None
    match = _AZURE_AUTHORITY_RE.fullmatch(authority)
    return match.group("account") if match else None


def _is_azure_container(match: re.Match[str]) -> bool:
    host = _HOST_RE.match(match.string, match.end())
    authority = f"{match.group(2)}@{host.group(0) if host else ''}"
    return azure_account(match.group(1)[: -len("://")], authority) is not None


def scrubbed(exc: BaseException, redact: Any = redact_userinfo) -> RedactedCause:
    """A :class:`RedactedCause` standing for ``exc`` (and, in its message, its chain).

    The messages of the causes ``exc`` was raised from are appended (redacted
    too), so nothing useful is lost when the chain itself is dropped.
    """
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(parts) < 5:
        seen.add(id(current))
        text = str(current)
        parts.append(f"{type(current).__name__}: {text}" if parts else text)
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    message = " <- ".join(p for p in parts if p)
    return RedactedCause(type(exc).__name__, redact(message))


def _install_log_redaction() -> None:
    """Redact the records of :data:`REDACTED_LOGGERS` as they are made.

    botocore logs every request at DEBUG, URL included (an endpoint's user
    info with it). A filter on a logger sees only the records made at that
    very logger, not at its children, and handlers belong to the
    application; the record factory sees every record, before any handler.
    It is chained to the factory in place, as the logging manual describes.
    """
    global _installed
    with _INSTALL_LOCK:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if record.name.startswith(REDACTED_LOGGERS):
                _redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


def _redact_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a bad format string is logging's to report
        return
    cleaned = _redact_all(message)
    if cleaned != message:
        record.msg, record.args = cleaned, ()
    if record.exc_info and record.exc_info[1] is not None:
        text = logging.Formatter().formatException(record.exc_info)
        record.exc_text = _redact_all(text)


def _redact_all(text: str) -> str:
    for redactor in list(_LIVE):
        text = redactor(text)
    return redact_userinfo(text)


def is_secret_name(name: object) -> bool:
    """Whether an option named ``name`` holds a secret (its name holds a :data:`SECRET_WORDS` word)."""
    return any(word in str(name).lower() for word in SECRET_WORDS)


def masked(value: Any, secret: bool = False) -> Any:
    """A JSON-like value with what secret-named keys hold replaced by ``***``, at any depth.

    The rule the redactor reads options by (everything under a secret's name
    is secret); the user info of URLs in the other strings is hidden too.
    """
    if secret:
        return MASK
    if isinstance(value, Mapping):
        return {key: masked(item, is_secret_name(key)) for key, item in value.items()}
    if isinstance(value, list):
        return [masked(item) for item in value]
    return redact_userinfo(value) if isinstance(value, str) else value


def _secret_values(options: Mapping[str, Any], inside_secret: bool = False) -> Iterator[str]:
    for name, value in options.items():
        secret = inside_secret or is_secret_name(name)
        if isinstance(value, Mapping):
            # Everything under a secret's name is secret ({"credential": {...}}).
            yield from _secret_values(value, secret)
        elif isinstance(value, str) and value:
            if secret:
                yield value
                yield from _secret_parts(value)
            yield from userinfo_secrets(value)
        elif secret and value is not None:
            yield from _credential_secrets(value)


#: Where credential objects keep their secrets: azure-core's AzureSasCredential
#: (``signature``), AzureKeyCredential (``key``), AzureNamedKeyCredential
#: (``named_key.key``), and the common spellings of others (google-auth's
#: ``token``, service principals' ``client_secret``).
_CREDENTIAL_ATTRIBUTES = ("signature", "key", "named_key", "token", "secret", "client_secret")


def _credential_secrets(value: Any, depth: int = 0) -> Iterator[str]:
    """The secret strings a credential object holds, where they are known to be."""
    if depth > 2:
        return
    for attribute in _CREDENTIAL_ATTRIBUTES:
        try:
            found = getattr(value, attribute, None)
        except Exception:  # noqa: BLE001, S112 - a property that fetches a token may fail
            continue
        if isinstance(found, str) and found:
            yield found
            yield from _secret_parts(found)
        elif found is not None and not callable(found) and not isinstance(found, (int, float)):
            yield from _credential_secrets(found, depth + 1)


#: The parts of an Azure connection string (``Name=value;...``) that are secrets.
_CONNECTION_SECRETS = ("accountkey", "sharedaccesssignature")


def _secret_parts(value: str) -> Iterator[str]:
    """Secrets inside a secret, which a library may echo alone.

    An Azure connection string's ``AccountKey`` and ``SharedAccessSignature``,
    and a SAS token's signature (``sig=``), which the Azure SDK puts into
    request URLs on its own.
    """
    for part in value.split(";"):
        name, equals, secret = part.partition("=")
        if equals and name.strip().lower() in _CONNECTION_SECRETS and secret:
            yield secret
            yield from _secret_parts(secret)
    for part in value.lstrip("?").split("&"):
        name, equals, secret = part.partition("=")
        if equals and name == "sig" and secret:
            yield secret


def userinfo_secrets(text: str) -> Iterator[str]:
    """The user info (whole, and its password) of every URL in ``text``."""
    for match in _URL_USERINFO_RE.finditer(text):
        userinfo = match.group(2)
        if not _is_userinfo(userinfo) or _is_azure_container(match):
            continue
        yield userinfo
        _, colon, password = userinfo.partition(":")
        if colon and password:
            yield password


def _spellings(secret: str) -> set[str]:
    """The ways ``secret`` may be written into a message by the libraries on the way."""
    spellings = {
        secret,
        quote(secret, safe=""),
        quote(secret, safe="/"),
        quote_plus(secret),
        unquote(secret),
        secret.encode("unicode_escape").decode("ascii"),
        repr(secret)[1:-1],
    }
    with_bytes = repr(secret.encode("utf-8", "surrogatepass"))[2:-1]
    spellings.add(with_bytes)
    return spellings


__all__ = [
    "AZURE_SCHEMES",
    "MASK",
    "SECRET_WORDS",
    "RedactedCause",
    "Redactor",
    "azure_account",
    "is_secret_name",
    "masked",
    "redact_userinfo",
    "scrubbed",
    "userinfo_secrets",
]
