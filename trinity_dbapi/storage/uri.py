"""Root URI and storage path rules (seed 000, "Storage Location").

A Trinity Lakehouse lives under one *root URI*. The seed requires that a URI is
used only if evaluating it on a POSIX file system leaves it unchanged, so that
object-store keys are read literally: ``s3://my-bucket/../file`` would resolve to
``s3://file`` and is therefore refused. The root URI is always a directory and
is always treated as ending with ``/``.

Decisions recorded here (and in docs/storage.md):

* **Plain paths are OS paths, not URIs.** An input without a ``scheme://``
  (``lake``, ``./lake``, ``../lake``, ``/tmp/lake``, ``~/lake``) names a local
  directory the way a shell would: ``~`` is expanded and the path is made
  absolute with :func:`os.path.abspath` (which resolves ``.`` and ``..`` the OS
  way) *before* the URI rules apply. The result is ``file:///abs/path/``. Only
  URIs with a scheme are held to the "unchanged under POSIX normalisation" rule.
* **``file://`` URIs must be absolute**: ``file:///abs/path`` or
  ``file://localhost/abs/path`` (normalised to ``file:///abs/path/``);
  ``file://lake`` would make ``lake`` a host name and is refused.
* **Whole-URI segments.** The bucket or host counts as the first segment, so
  ``s3://../x`` is refused like ``s3://b/../x``. Segments that percent-decode to
  ``.`` or ``..`` (``%2e%2E``) are refused too, because RFC 3986 normalisation
  would treat them as dot segments.
* **No query, fragment, user info or control characters.** ``?`` and ``#`` would
  be read as a query or fragment by URI parsers but literally by file systems;
  credentials belong in ``storage_options``, never in the URI. Messages about a
  URI that carries user info show it with the user info replaced by ``***``.
* **Azure's account in the authority** (Hadoop's
  ``abfss://<container>@<account>.dfs.core.windows.net/path``) is the one
  ``@`` allowed: a container name before it (3-63 of ``a-z``, ``0-9``, ``-``)
  and an account's host after it, which holds no credential.
* The scheme is lower-cased (schemes are case-insensitive, RFC 3986 3.1);
  nothing else is rewritten except adding the trailing ``/``.

Imports from storage/: redact.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote

from trinity_dbapi.errors import InvalidURIError
from trinity_dbapi.storage.redact import azure_account, redact_userinfo

_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://(.*)$", re.DOTALL)
# "s3:bucket/x" or "file:/tmp/x": a scheme without "//" (a one-letter "scheme" is
# a Windows drive letter and is left to the plain-path branch).
_SCHEME_NO_SLASHES_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):(?!//)")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")

# Schemes whose authority is a bucket name and therefore required.
_BUCKET_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs", "abfs", "abfss", "az"})

_RULE = (
    "a TrinityLake URI must stay identical when evaluated as a POSIX path "
    "(seed 'Storage Location'), so '.', '..' and empty segments are not allowed"
)


def normalize_root_uri(uri: str) -> str:
    """Validate a root URI and return it in canonical form, ending with ``/``.

    Args:
        uri: a URI such as ``s3://bucket/lake`` or ``memory://x/lake``, or a plain
            local path such as ``./lake`` (converted to ``file:///abs/lake/``).

    Returns:
        The canonical root URI; ``normalize_root_uri`` is idempotent.

    Raises:
        InvalidURIError: the URI breaks a rule; the message names the offending
            part, its position, the rule and the fix.
    """
    if not isinstance(uri, str):
        raise InvalidURIError(repr(uri), f"root URI must be a string, got {type(uri).__name__}")
    if not uri:
        raise InvalidURIError(
            uri, "root URI is empty: pass a URI such as 's3://bucket/lake' or a path"
        )
    match = _SCHEME_RE.match(uri)
    if match is None:
        if _SCHEME_NO_SLASHES_RE.match(uri):
            shown = _redact_userinfo(uri)
            scheme, _, rest = shown.partition(":")
            slashes = ":///" if scheme.lower() == "file" else "://"
            raise InvalidURIError(
                shown,
                f"unsupported root URI shape {shown!r}: the scheme {scheme!r} must be "
                f"followed by '//' (e.g. '{scheme.lower()}{slashes}{rest.lstrip('/')}'; "
                "for local files use 'file:///abs/path' or a plain path)",
            )
        return _normalize_local_path(uri)
    scheme, rest = match.group(1).lower(), match.group(2)
    return _normalize_uri(uri, scheme, rest)


def _normalize_local_path(path: str) -> str:
    # A plain path is an OS path: resolve it the way the shell user means it,
    # then hold the resulting file URI to the same rules as any other URI.
    _check_characters(path, path)
    absolute = os.path.abspath(os.path.expanduser(path))
    if os.sep != "/":
        absolute = absolute.replace(os.sep, "/")
    # POSIX allows abspath to keep a leading "//"; collapse it so the result has
    # no empty segment and normalising it again gives the same URI.
    absolute = "/" + absolute.lstrip("/")
    return _normalize_uri(f"file://{absolute}", "file", absolute)


def _normalize_uri(original: str, scheme: str, rest: str) -> str:
    shown = _redact_userinfo(original)
    _check_characters(original, shown)
    authority, slash, path = rest.partition("/")
    if ("@" in authority and azure_account(scheme, authority) is None) or shown != original:
        raise InvalidURIError(
            shown,
            f"root URI {shown!r} carries user info (credentials) in its authority; "
            "remove it and pass credentials in storage_options instead",
        )
    if scheme == "file" and (authority not in ("", "localhost") or not slash):
        raise InvalidURIError(
            shown,
            f"file URI {shown!r} is not absolute: {authority!r} would be read as a "
            "host name; write file:///absolute/path (three slashes) or pass a "
            "plain local path",
        )
    if scheme in _BUCKET_SCHEMES and not authority:
        raise InvalidURIError(
            shown,
            f"root URI {shown!r} has no bucket after '{scheme}://'; write "
            f"{scheme}://<bucket>/<path>",
        )
    if scheme == "file" or not authority:
        # "scheme:///abs/path": no host, the path starts at the third "/".
        segments = path.split("/")
        first_offset = len(scheme) + len("://") + len(authority) + 1
        prefix = f"{scheme}:///"
    else:
        segments = [authority, *path.split("/")] if slash else [authority]
        first_offset = len(scheme) + len("://")
        prefix = f"{scheme}://"
    # A single trailing "/" is the directory marker, not an empty segment.
    if len(segments) > 1 and segments[-1] == "":
        segments = segments[:-1]
    if prefix.endswith(":///") and segments == [""]:
        return prefix  # the file system root, e.g. "file:///"
    _check_segments(shown, segments, first_offset)
    return prefix + "/".join(segments) + "/"


def _check_characters(uri: str, shown: str) -> None:
    for char, what in (("?", "a query string"), ("#", "a fragment")):
        position = uri.find(char)
        if position >= 0:
            raise InvalidURIError(
                shown,
                f"root URI {shown!r} contains {char!r} at character {position}, which "
                f"starts {what}; root URIs may not have queries or fragments: remove "
                "it (options go in storage_options) or rename the directory",
            )
    bad = _CONTROL_RE.search(uri)
    if bad is not None:
        raise InvalidURIError(
            shown,
            f"root URI {shown!r} contains the control character {bad.group()!r} at "
            f"character {bad.start()}; remove it",
        )


def _check_segments(shown: str, segments: list[str], first_offset: int) -> None:
    offset = first_offset
    for index, segment in enumerate(segments, start=1):
        decoded = unquote(segment)
        if segment == "":
            problem, fix = "is empty (a doubled '/')", "remove the extra '/'"
        elif decoded in (".", ".."):
            problem = f"is the dot segment {segment!r}"
            fix = (
                "spell the intended location out without it"
                if decoded == ".."
                else "remove the segment"
            )
        else:
            offset += len(segment) + 1
            continue
        raise InvalidURIError(
            shown,
            f"invalid root URI {shown!r}: segment {index} (at character {offset}) "
            f"{problem}; {_RULE}; fix: {fix}",
        )


def check_path(path: str, *, is_prefix: bool = False) -> None:
    """Validate a storage path (or list prefix) relative to the root URI.

    Paths use ``/`` as separator, never start with ``/`` and may not contain
    ``.``, ``..`` or empty segments, so no path can escape the root. A prefix may
    be empty and may end with ``/`` or part of a name.

    Args:
        path: the path to check.
        is_prefix: whether ``path`` is a list prefix rather than a file path.

    Raises:
        InvalidURIError: the path breaks a rule.
    """
    if not isinstance(path, str):
        raise InvalidURIError(repr(path), f"storage path must be a string, not {path!r}")
    if is_prefix:
        if path == "":
            return
        segments = path.split("/")[:-1]  # the last part is a free string prefix
        last = path.rsplit("/", 1)[-1]
        if last in (".", ".."):
            segments.append(last)
    else:
        segments = path.split("/")
    kind = "list prefix" if is_prefix else "storage path"
    if path.startswith("/") or not (segments or is_prefix):
        raise InvalidURIError(
            path,
            f"invalid {kind} {path!r}: paths are relative to the root URI and may not "
            "be empty or start with '/'",
        )
    for index, segment in enumerate(segments, start=1):
        if segment in ("", ".", ".."):
            raise InvalidURIError(
                path,
                f"invalid {kind} {path!r}: segment {index} is {segment!r}; paths may "
                "not contain '.', '..' or empty segments, so they cannot leave the root",
            )
    if _CONTROL_RE.search(path):
        raise InvalidURIError(path, f"invalid {kind} {path!r}: control characters")


def _redact_userinfo(uri: str) -> str:
    # "scheme://user:password@host/..." (or without "//"): hide the user info so
    # a password typed into a URI never reaches a message or a log. A password
    # may hold "/", "@" and ":" (redact_userinfo finds where it ends).
    match = _SCHEME_NO_SLASHES_RE.match(uri)
    if match is None:
        return redact_userinfo(uri)
    # "s3:key:secret@bucket": redact it as the "s3://..." it stands for.
    scheme = match.group(0)
    return scheme + redact_userinfo(f"{scheme}//{uri[len(scheme) :]}")[len(scheme) + 2 :]


__all__ = ["check_path", "normalize_root_uri"]
