"""File locations: golden examples from the Storage Location seed and properties."""

from __future__ import annotations

import re

import mmh3
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinity_dbapi.errors import VersionOutOfRangeError
from trinity_dbapi.format import paths

UUID = "6fcb514b-b878-4c9d-95b7-8dc3a7ce6fd8"
UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
PREFIX_RE = r"[01]{4}/[01]{4}/[01]{4}/[01]{8}"


def _murmur3_x86_32(data: bytes, seed: int = 0) -> int:
    """Reference murmur3 x86 32-bit, to pin down what mmh3 computes."""
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    blocks = len(data) // 4
    for i in range(blocks):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = rotl((k * c1) & mask, 15) * c2 & mask
        h = (rotl(h ^ k, 13) * 5 + 0xE6546B64) & mask
    tail = data[4 * blocks :]
    if tail:
        k = int.from_bytes(tail, "little")
        k = rotl((k * c1) & mask, 15) * c2 & mask
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    return h ^ (h >> 16)


# --- optimization -----------------------------------------------------------------


def test_seed_example_golden() -> None:
    # The seed shows "0101/0101/0101/10101100-..." as an illustration only; this is
    # the real murmur3 x86 32-bit (seed 0) of the UTF-8 path, first 20 bits.
    assert (
        paths.optimize_path("my/path/my-table-definition.binpb")
        == "0000/0110/1101/11010111-my-path-my-table-definition.binpb"
    )


def test_seed_example_shape() -> None:
    optimized = paths.optimize_path("my/path/my-table-definition.binpb")
    assert re.fullmatch(PREFIX_RE + r"-my-path-my-table-definition\.binpb", optimized)


def test_mmh3_matches_reference_murmur3() -> None:
    data = b"my/path/my-table-definition.binpb"
    assert mmh3.hash(data, 0, signed=False) == _murmur3_x86_32(data) == 115176318


@given(st.text(min_size=1).filter(lambda s: not s.startswith("/")))
def test_optimize_path_properties(original: str) -> None:
    optimized = paths.optimize_path(original)
    assert optimized == paths.optimize_path(original)
    prefix, suffix = optimized[:23], optimized[24:]
    assert optimized[23] == "-"
    assert re.fullmatch(PREFIX_RE, prefix)
    assert prefix.count("/") == 3
    digest = _murmur3_x86_32(original.encode("utf-8", "surrogatepass"))
    assert prefix.replace("/", "") == format(digest, "032b")[:20]
    assert suffix == original.replace("/", "-")


@pytest.mark.parametrize("bad", ["", "/abs/path"])
def test_optimize_path_rejects_non_relative(bad: str) -> None:
    with pytest.raises(ValueError, match="relative path"):
        paths.optimize_path(bad)


# --- node and definition files ------------------------------------------------------


def test_node_file_name_seed_example() -> None:
    assert paths.node_file_name(UUID) == f"node-{UUID}.arrow"


def test_new_node_file_path_shape() -> None:
    path = paths.new_node_file_path()
    assert re.fullmatch(PREFIX_RE + r"-node-" + UUID_RE + r"\.arrow", path)
    original = path[24:]
    assert path == paths.optimize_path(original)
    assert paths.new_node_file_path() != path


def test_table_definition_seed_example() -> None:
    original = f"table-t1-ns1-{UUID}.binpb"
    assert paths.table_definition_path("ns1", "t1", UUID) == paths.optimize_path(original)
    assert paths.table_definition_path("ns1", "t1", UUID) == (
        f"0011/1010/0000/10010011-table-t1-ns1-{UUID}.binpb"
    )


def test_namespace_definition_path() -> None:
    expected = paths.optimize_path(f"namespace-ns1-{UUID}.binpb")
    assert paths.namespace_definition_path("ns1", UUID) == expected


def test_object_definition_path_fresh_uuid() -> None:
    path = paths.table_definition_path("ns1", "t1")
    assert re.fullmatch(PREFIX_RE + r"-table-t1-ns1-" + UUID_RE + r"\.binpb", path)


def test_identifier_escaping() -> None:
    path = paths.table_definition_path("a/b%", "ü x", UUID)
    assert path.endswith(f"-table-%C3%BC%20x-a%2Fb%25-{UUID}.binpb")
    assert path.count("/") == 3


def test_identifier_is_truncated_without_splitting_escapes() -> None:
    path = paths.namespace_definition_path("é" * 100, UUID)
    identifier = path[24 + len("namespace-") : -len(f"-{UUID}.binpb")]
    assert len(identifier) <= paths.MAX_IDENTIFIER_CHARS
    assert re.fullmatch(r"(%[0-9A-F]{2})+", identifier)
    assert len(path.encode()) <= paths.MAX_WRITTEN_PATH_BYTES


@given(st.text(min_size=1), st.text(min_size=1))
def test_definition_paths_are_safe(namespace: str, table: str) -> None:
    path = paths.table_definition_path(namespace, table, UUID)
    assert path.isascii()
    assert path.count("/") == 3
    assert not path.startswith("/")
    assert len(path.encode()) <= paths.MAX_WRITTEN_PATH_BYTES
    assert re.fullmatch(PREFIX_RE + r"-table-[A-Za-z0-9_.+%-]*-" + UUID + r"\.binpb", path)


@pytest.mark.parametrize("object_type", ["", "Table", "1table", "tab/le", "x" * 17])
def test_object_type_must_be_a_short_word(object_type: str) -> None:
    with pytest.raises(ValueError, match="object type"):
        paths.object_definition_path(object_type, "x", UUID)


def test_uuid_must_be_canonical() -> None:
    with pytest.raises(ValueError, match="UUID"):
        paths.table_definition_path("ns", "t", "../../etc")
    with pytest.raises(ValueError, match="UUID"):
        paths.node_file_name(UUID.upper())


# --- root node files ------------------------------------------------------------


def test_root_node_file_name_seed_example() -> None:
    assert paths.root_node_file_name(100) == "_00100110000000000000000000000000.arrow"
    assert paths.root_node_version("_00100110000000000000000000000000.arrow") == 100


@pytest.mark.parametrize(
    ("version", "name"),
    [
        (0, "_" + "0" * 32 + ".arrow"),
        (1, "_1" + "0" * 31 + ".arrow"),
        (2**32 - 1, "_" + "1" * 32 + ".arrow"),
    ],
)
def test_root_node_file_name_edges(version: int, name: str) -> None:
    assert paths.root_node_file_name(version) == name
    assert paths.root_node_version(name) == version


@pytest.mark.parametrize("version", [2**32, -1, True, 1.0, "1"])
def test_root_node_version_out_of_range(version: object) -> None:
    with pytest.raises(VersionOutOfRangeError):
        paths.root_node_file_name(version)  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_root_node_round_trip(version: int) -> None:
    name = paths.root_node_file_name(version)
    assert len(name) == 1 + 32 + len(".arrow")
    assert paths.root_node_version(name) == version


@pytest.mark.parametrize(
    "name",
    [
        "_latest_hint.txt",
        "_0010011000000000000000000000000.arrow",
        "_001001100000000000000000000000000.arrow",
        "_00100110000000000000000000000000.ipc",
        "x/_00100110000000000000000000000000.arrow",
        f"_lakehouse_def_{UUID}.binpb",
    ],
)
def test_root_node_version_rejects_other_names(name: str) -> None:
    assert paths.root_node_version(name) is None


# --- hint and lakehouse definition ----------------------------------------------------


def test_latest_hint_file() -> None:
    assert paths.LATEST_HINT_FILE == "_latest_hint.txt"


def test_lakehouse_definition_path() -> None:
    path = paths.new_lakehouse_definition_path()
    assert re.fullmatch(r"_lakehouse_def_" + UUID_RE + r"\.binpb", path)
    assert paths.is_lakehouse_definition_path(path)
    assert paths.is_lakehouse_definition_path(f"_lakehouse_def_{UUID}.binpb")
    assert not paths.is_lakehouse_definition_path(f"_lakehouse_def_{UUID}.binpb.tmp")
    assert not paths.is_lakehouse_definition_path(paths.optimize_path(path))
    assert not paths.is_lakehouse_definition_path("_latest_hint.txt")
