"""Golden and property tests for root URI normalisation (seed 000)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from trinity_dbapi.errors import InvalidURIError, ProgrammingError
from trinity_dbapi.storage import normalize_root_uri, open_storage
from trinity_dbapi.storage.uri import check_path

CWD = os.getcwd()


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("s3://my-bucket/my-lakehouse", "s3://my-bucket/my-lakehouse/"),
        ("s3://my-bucket/my-lakehouse/", "s3://my-bucket/my-lakehouse/"),
        ("s3://my-trinity-lakehouse", "s3://my-trinity-lakehouse/"),
        ("s3://my-trinity-lakehouse/", "s3://my-trinity-lakehouse/"),
        ("S3://Bucket/Lake", "s3://Bucket/Lake/"),  # only the scheme is case-folded
        ("s3a://b/x/y", "s3a://b/x/y/"),
        ("memory://t/lake", "memory://t/lake/"),
        ("memory:///lake", "memory:///lake/"),
        ("gs://b/a b/%41", "gs://b/a b/%41/"),  # kept literally, never decoded
        ("hdfs://namenode:8020/warehouse", "hdfs://namenode:8020/warehouse/"),
        ("file:///tmp/lake", "file:///tmp/lake/"),
        ("file://localhost/tmp/lake", "file:///tmp/lake/"),
        ("file:///", "file:///"),
        ("/tmp/lake", "file:///tmp/lake/"),
        ("/tmp/lake/", "file:///tmp/lake/"),
        ("/tmp/x/../lake", "file:///tmp/lake/"),  # OS path: resolved the OS way
        ("//tmp//lake", "file:///tmp/lake/"),
        ("lake", f"file://{CWD}/lake/"),
        ("./lake", f"file://{CWD}/lake/"),
        ("../lake", f"file://{os.path.dirname(CWD)}/lake/"),
        (".", f"file://{CWD}/"),
        ("~/lake", f"file://{os.path.expanduser('~')}/lake/"),
        ("/", "file:///"),
    ],
)
def test_golden_normalisation(uri: str, expected: str) -> None:
    assert normalize_root_uri(uri) == expected
    assert normalize_root_uri(expected) == expected


@pytest.mark.parametrize(
    ("uri", "needles"),
    [
        ("s3://my-bucket/../file", ["'..'", "segment 2", "character 15", "POSIX"]),
        ("s3://b/x/..", ["'..'", "segment 3"]),
        ("s3://b/./x", ["'.'", "segment 2", "remove the segment"]),
        ("s3://b//x", ["empty", "segment 2", "character 7", "remove the extra '/'"]),
        ("s3://b/x//", ["empty", "segment 3"]),
        ("s3://../x", ["'..'", "segment 1"]),
        ("s3://b/%2e%2E/x", ["'%2e%2E'", "segment 2"]),
        ("file:///tmp/../lake", ["'..'", "segment 2"]),
        ("file:////tmp/lake", ["empty", "segment 1"]),
        ("memory://t/a/./b", ["'.'", "segment 3"]),
        ("s3://b/x?versionId=1", ["'?'", "query", "character 8"]),
        ("s3://b/x#frag", ["'#'", "fragment"]),
        ("/tmp/la?ke", ["'?'", "query"]),
        ("s3://b/x\ny", ["control character"]),
        ("file://lake", ["not absolute", "file:///"]),
        ("s3://", ["no bucket"]),
        ("s3:///x", ["no bucket"]),
        ("s3:bucket/x", ["'//'", "s3://bucket/x"]),
        ("file:/tmp/x", ["'//'", "file:///tmp/x"]),
        ("", ["empty"]),
    ],
)
def test_golden_rejections_name_the_problem_and_fix(uri: str, needles: list[str]) -> None:
    with pytest.raises(InvalidURIError) as info:
        normalize_root_uri(uri)
    message = str(info.value)
    for needle in needles:
        assert needle in message, (needle, message)
    assert isinstance(info.value, ProgrammingError)


def test_dot_dot_message_names_rule_and_fix() -> None:
    with pytest.raises(InvalidURIError) as info:
        normalize_root_uri("s3://my-bucket/../file")
    assert info.value.uri == "s3://my-bucket/../file"
    assert str(info.value) == (
        "invalid root URI 's3://my-bucket/../file': segment 2 (at character 15) is "
        "the dot segment '..'; a TrinityLake URI must stay identical when evaluated "
        "as a POSIX path (seed 'Storage Location'), so '.', '..' and empty segments "
        "are not allowed; fix: spell the intended location out without it"
    )


@pytest.mark.parametrize(
    "uri",
    [
        "s3://AKIA:hunter2pw@bucket/lake",
        "s3:AKIA:hunter2pw@bucket",
        "s3://u:hunter2pw@b/x?q",
    ],
)
def test_user_info_is_rejected_without_echoing_the_password(uri: str) -> None:
    with pytest.raises(InvalidURIError) as info:
        normalize_root_uri(uri)
    assert "hunter2pw" not in str(info.value)
    assert "hunter2pw" not in info.value.uri
    assert "***@" in str(info.value)


@pytest.mark.parametrize(
    "uri", ["s3://b/../x", "s3://b//x", "s3://b/x?a", "s3:b", "nosuchproto://b/x/./y"]
)
def test_open_storage_errors_never_contain_storage_options(uri: str) -> None:
    secret = "Sup3r-Secret-Passw0rd"
    options = {"key": "AKIAKEYID0000", "secret": secret, "password": secret}
    with pytest.raises(InvalidURIError) as info:
        open_storage(uri, storage_options=options)
    assert secret not in str(info.value) and "AKIAKEYID0000" not in str(info.value)
    assert secret not in repr(info.value.args)


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("a", True),
        ("a/b.arrow", True),
        ("_latest_hint.txt", True),
        ("0101/0101/0101/10101100-my-path.binpb", True),
        ("", False),
        ("/a", False),
        ("a/", False),
        ("a//b", False),
        ("./a", False),
        ("a/../b", False),
        ("..", False),
    ],
)
def test_check_path(path: str, ok: bool) -> None:
    if ok:
        check_path(path)
    else:
        with pytest.raises(InvalidURIError):
            check_path(path)


@pytest.mark.parametrize("prefix", ["", "a", "a/", "a/b", "_", "a/.t", "a/b."])
def test_check_prefix_allows_partial_names(prefix: str) -> None:
    check_path(prefix, is_prefix=True)  # raises InvalidURIError when rejected


@pytest.mark.parametrize("prefix", ["/", "/a", "a//", "../", "a/..", "./x"])
def test_check_prefix_rejects_escapes(prefix: str) -> None:
    with pytest.raises(InvalidURIError):
        check_path(prefix, is_prefix=True)


# -- properties ------------------------------------------------------------------------

_SAFE = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_characters="/?#@%", exclude_categories=("Cc", "Cs")
    ),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))
_SCHEMES = st.sampled_from(["s3", "s3a", "memory", "gs", "hdfs", "abfs"])


@given(
    scheme=_SCHEMES,
    bucket=_SAFE,
    segments=st.lists(_SAFE, max_size=5),
    slash=st.booleans(),
)
@example(scheme="s3", bucket="my-bucket", segments=["my-lakehouse"], slash=False)
def test_valid_uris_only_gain_a_trailing_slash(
    scheme: str, bucket: str, segments: list[str], slash: bool
) -> None:
    body = "/".join([bucket, *segments])
    uri = f"{scheme}://{body}{'/' if slash else ''}"
    normalized = normalize_root_uri(uri)
    assert normalized == f"{scheme}://{body}/"
    assert normalize_root_uri(normalized) == normalized


@given(
    scheme=_SCHEMES,
    segments=st.lists(_SAFE, min_size=1, max_size=5),
    bad=st.sampled_from(["..", ".", "", "%2e", "%2E%2e"]),
    data=st.data(),
)
def test_dot_and_empty_segments_are_always_rejected(
    scheme: str, segments: list[str], bad: str, data: st.DataObject
) -> None:
    # Insert the bad segment after the bucket, so it is never the trailing "/".
    position = data.draw(st.integers(min_value=1, max_value=len(segments) - 1 or 1))
    parts = [*segments[:position], bad, *segments[position:]]
    if bad == "" and position == len(parts) - 1:
        parts.append("tail")
    uri = f"{scheme}://{'/'.join(parts)}"
    with pytest.raises(InvalidURIError) as info:
        normalize_root_uri(uri)
    message = str(info.value)
    assert f"segment {parts.index(bad) + 1} " in message
    if bad:
        assert repr(bad) in message
    else:
        assert "empty" in message


@given(st.text(max_size=40))
@example("s3://b/../x")
@example("~")
@example("s3:")
@example("a:b")
def test_any_input_is_rejected_or_normalised_idempotently(uri: str) -> None:
    try:
        normalized = normalize_root_uri(uri)
    except InvalidURIError as exc:
        assert str(exc)
        return
    assert normalized.endswith("/")
    assert "://" in normalized
    assert normalize_root_uri(normalized) == normalized


@given(
    relative=st.lists(st.text(alphabet="abcxyz-_.", min_size=1, max_size=6), min_size=1, max_size=4)
)
def test_relative_local_paths_become_absolute_file_uris(relative: list[str]) -> None:
    path = "/".join(relative)
    normalized = normalize_root_uri(path)
    assert normalized == "file://" + os.path.abspath(path).rstrip("/") + "/"
    assert normalize_root_uri(normalized) == normalized


@given(password=st.text(alphabet="abcdefXYZ0123456789!$&()*+,;=-._~", min_size=8, max_size=20))
def test_password_in_user_info_never_appears_in_the_error(password: str) -> None:
    for uri in (
        f"s3://user:{password}@bucket/lake",
        f"s3://user:{password}@bucket/../x",
    ):
        with pytest.raises(InvalidURIError) as info:
            normalize_root_uri(uri)
        assert password not in str(info.value)
        assert password not in info.value.uri


def test_a_root_that_is_a_file_is_named_as_the_problem(tmp_path: Path) -> None:
    import trinity_dbapi

    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("keep me")
    with pytest.raises(trinity_dbapi.OperationalError) as raised:
        trinity_dbapi.connect(str(not_a_folder))
    message = str(raised.value)
    assert "the root is a file, not a folder: give the path of a folder" in message
    assert not_a_folder.read_text() == "keep me"  # nothing lost
