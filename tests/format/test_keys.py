"""Key encoding: golden examples from the Key Encoding seed and properties."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from trinity_dbapi.errors import InvalidNameError
from trinity_dbapi.format import keys
from trinity_dbapi.format.keys import KeyLimits, ObjectId

SEED_LIMITS = KeyLimits(namespace_max_bytes=8, table_max_bytes=8)
MAX_BYTES = 12
LIMITS = KeyLimits(namespace_max_bytes=MAX_BYTES, table_max_bytes=MAX_BYTES)

# Any character except the forbidden ones (and surrogates, which are not UTF-8).
name_chars = st.characters(min_codepoint=0x21, exclude_categories=["Cs"], exclude_characters="\x7f")
names = st.text(name_chars, min_size=1, max_size=MAX_BYTES).filter(
    lambda s: len(s.encode("utf-8")) <= MAX_BYTES
)


# --- system keys and schema IDs ----------------------------------------------------


def test_system_keys() -> None:
    assert keys.LAKEHOUSE_DEF == "lakehouse_def"
    assert keys.PREVIOUS_ROOT == "previous_root"
    assert keys.ROLLBACK_FROM_ROOT == "rollback_from_root"
    assert keys.CREATED_AT_MILLIS == "created_at_millis"
    assert keys.N_KEYS == "n_keys"
    assert keys.TXN_ID == "txn_id"
    assert {
        "lakehouse_def",
        "previous_root",
        "rollback_from_root",
        "created_at_millis",
        "n_keys",
        "txn_id",  # our extension: the transaction that made a root version
    } == keys.SYSTEM_KEYS


@pytest.mark.parametrize(
    ("schema_id", "encoded"),
    [
        (keys.LAKEHOUSE_SCHEMA_ID, "A==="),
        (keys.NAMESPACE_SCHEMA_ID, "B==="),
        (keys.TABLE_SCHEMA_ID, "C==="),
        # The seed says "D===" for 4, contradicting its own table: 4 is "E===".
        (4, "E==="),
        (26, "a==="),
        (62, "+==="),
        (63, "/==="),
        (64, "BA=="),
        (4095, "//=="),
        (4096, "BAA="),
        (keys.MAX_SCHEMA_ID, "////"),
    ],
)
def test_schema_id_golden(schema_id: int, encoded: str) -> None:
    assert keys.encode_schema_id(schema_id) == encoded
    assert keys.decode_schema_id(encoded) == schema_id


@given(st.integers(min_value=0, max_value=keys.MAX_SCHEMA_ID))
def test_schema_id_round_trip(schema_id: int) -> None:
    encoded = keys.encode_schema_id(schema_id)
    assert len(encoded) == 4
    assert keys.decode_schema_id(encoded) == schema_id


@pytest.mark.parametrize("bad", [-1, keys.MAX_SCHEMA_ID + 1])
def test_schema_id_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match="outside"):
        keys.encode_schema_id(bad)


@pytest.mark.parametrize("bad", [True, 1.0, "1"])
def test_schema_id_not_an_int(bad: object) -> None:
    with pytest.raises(TypeError):
        keys.encode_schema_id(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "A==", "A====", "====", "A=A=", "AB==", "B*==", "=B=="])
def test_schema_id_decode_rejects_non_canonical(bad: str) -> None:
    with pytest.raises(ValueError, match="schema ID"):
        keys.decode_schema_id(bad)


# --- names --------------------------------------------------------------------------


def test_encode_name_seed_example() -> None:
    assert keys.encode_name("default", 8) == " default "
    assert keys.decode_name(" default ") == "default"


def test_encode_name_pads_in_bytes() -> None:
    encoded = keys.encode_name("é", 4)  # 2 bytes, so 2 padding spaces
    assert encoded == " é  "
    assert len(encoded.encode("utf-8")) == 5


@pytest.mark.parametrize(
    ("name", "code", "position"),
    [("a b", "U+0020", 1), ("\x00", "U+0000", 0), ("ab\x1f", "U+001F", 2), ("x\x7f", "U+007F", 1)],
)
def test_forbidden_characters(name: str, code: str, position: int) -> None:
    with pytest.raises(InvalidNameError) as info:
        keys.validate_object_name(name, 100, "namespace")
    message = str(info.value)
    assert "namespace" in message
    assert repr(name) in message
    assert code in message
    assert f"position {position}" in message
    assert info.value.name == name


def test_name_too_long_names_bytes() -> None:
    with pytest.raises(InvalidNameError) as info:
        keys.validate_object_name("ééééé", 8, "table")
    message = str(info.value)
    assert "table" in message
    assert "10 bytes" in message
    assert "at most 8" in message
    assert "table_name_max_size_bytes" in message


@pytest.mark.parametrize("bad", ["", None, 3, b"ns"])
def test_empty_or_non_str_names(bad: object) -> None:
    with pytest.raises(InvalidNameError):
        keys.validate_object_name(bad, 8, "namespace")  # type: ignore[arg-type]


def test_fast_check_refuses_exactly_the_characters_the_rule_names() -> None:
    """The one-search fast path of check_name_characters agrees with the rule on every code point."""
    for code in range(0x110000):
        char = chr(code)
        refused = code <= 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF
        try:
            keys.check_name_characters(f"a{char}b", "table")
        except InvalidNameError as exc:
            assert refused, f"U+{code:04X} refused: {exc}"
            assert f"U+{code:04X} at position 1" in str(exc)
        else:
            assert not refused, f"U+{code:04X} accepted"


def test_lone_surrogate_rejected() -> None:
    with pytest.raises(InvalidNameError, match="U\\+D800"):
        keys.validate_object_name("a\ud800", 8, "table")


@given(names)
def test_name_round_trip(name: str) -> None:
    encoded = keys.encode_name(name, MAX_BYTES)
    assert len(encoded.encode("utf-8")) == MAX_BYTES + 1
    assert encoded.startswith(" ")
    assert keys.decode_name(encoded) == name


# --- object keys ----------------------------------------------------------------


def test_namespace_key_seed_example() -> None:
    assert keys.namespace_key("default", SEED_LIMITS) == "B=== default "


def test_table_key_seed_example() -> None:
    # The seed's table example "C===default[space]table[space][space][space]" drops
    # the leading space that its own encoded-name rule (and namespace example) has;
    # we follow the rule: every encoded name starts with a space.
    key = keys.table_key("default", "table", SEED_LIMITS)
    assert key == "C=== default  table   "
    assert key.startswith(keys.namespace_tables_prefix("default", SEED_LIMITS))


def test_decode_key_seed_examples() -> None:
    assert keys.decode_key("B=== default ", SEED_LIMITS) == ObjectId("namespace", "default")
    assert keys.decode_key("C=== default  table   ", SEED_LIMITS) == ObjectId(
        "table", "default", "table"
    )


def test_object_key() -> None:
    assert keys.object_key(ObjectId("namespace", "ns"), SEED_LIMITS) == "B=== ns      "
    assert keys.object_key(ObjectId("table", "ns", "t"), SEED_LIMITS) == ("C=== ns       t       ")
    with pytest.raises(InvalidNameError):
        keys.object_key(ObjectId("table", "ns"), SEED_LIMITS)


def test_key_names_the_object_kind() -> None:
    with pytest.raises(InvalidNameError, match="table name"):
        keys.table_key("ns", "a table", SEED_LIMITS)
    with pytest.raises(InvalidNameError, match="namespace name"):
        keys.table_key("name space", "t", SEED_LIMITS)


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "A=== default ",
        "B===default  ",
        "B=== default",
        "B=== default  ",
        "B=== def ult ",
        "C=== default ",
        "C=== default table    ",
        "D=== default ",
    ],
)
def test_decode_key_rejects_malformed(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        keys.decode_key(bad, SEED_LIMITS)


def test_decode_key_rejects_split_character() -> None:
    key = keys.namespace_key("aé", KeyLimits(3, 3))  # " aé" is 4 bytes
    with pytest.raises(InvalidNameError):
        keys.decode_key(key, KeyLimits(2, 4))


@given(names, names)
def test_key_round_trip(namespace: str, table: str) -> None:
    ns_key = keys.namespace_key(namespace, LIMITS)
    assert keys.decode_key(ns_key, LIMITS) == ObjectId("namespace", namespace)
    t_key = keys.table_key(namespace, table, LIMITS)
    assert keys.decode_key(t_key, LIMITS) == ObjectId("table", namespace, table)
    assert keys.object_key(keys.decode_key(t_key, LIMITS), LIMITS) == t_key


@given(st.lists(st.tuples(names, names), min_size=2, max_size=20, unique=True))
def test_key_order_is_name_order(pairs: list[tuple[str, str]]) -> None:
    by_key = sorted(pairs, key=lambda p: keys.table_key(p[0], p[1], LIMITS))
    # Padding with spaces (below every allowed character) keeps name order.
    assert by_key == sorted(pairs)


@given(names, names, st.lists(names, min_size=1, max_size=5), st.lists(names, max_size=5))
def test_tables_of_a_namespace_are_contiguous(
    ns_a: str, ns_b: str, tables_a: list[str], tables_b: list[str]
) -> None:
    assume(ns_a != ns_b)
    all_keys = [(keys.table_key(ns_a, t, LIMITS), "a") for t in tables_a]
    all_keys += [(keys.table_key(ns_b, t, LIMITS), "b") for t in tables_b]
    all_keys.append((keys.namespace_key(ns_a, LIMITS), "ns"))
    owners = [owner for _, owner in sorted(all_keys) if owner != "ns"]
    first, last = owners.index("a"), len(owners) - 1 - owners[::-1].index("a")
    assert set(owners[first : last + 1]) == {"a"}
    prefix = keys.namespace_tables_prefix(ns_a, LIMITS)
    assert all(key.startswith(prefix) for key, owner in all_keys if owner == "a")
    # Namespace keys ("B===") sort before every table key ("C===").
    assert min(all_keys)[1] == "ns"


@given(names, names, names, names)
def test_utf8_byte_order_equals_code_point_order(ns1: str, t1: str, ns2: str, t2: str) -> None:
    # Keys compare as Python str (code point order); for valid UTF-8 that is the
    # same as comparing the UTF-8 bytes, so storage-level byte order agrees.
    k1, k2 = keys.table_key(ns1, t1, LIMITS), keys.table_key(ns2, t2, LIMITS)
    assert (k1 < k2) == (k1.encode("utf-8") < k2.encode("utf-8"))
    assert (k1 == k2) == (k1.encode("utf-8") == k2.encode("utf-8"))


@given(names, names)
def test_table_name_under_is_decode_key(namespace: str, table: str) -> None:
    prefix = keys.namespace_tables_prefix(namespace, LIMITS)
    key = keys.table_key(namespace, table, LIMITS)
    assert keys.table_name_under(key, prefix, LIMITS) == table


_near_keys = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=MAX_BYTES + 3),
    # nearly right: a separator, a name (maybe with refused characters), padding
    st.builds(
        lambda sep, name, pad: sep + name + " " * pad,
        st.sampled_from(["", " ", "  ", "x"]),
        st.text(st.characters(codec="utf-8"), max_size=MAX_BYTES),
        st.integers(0, MAX_BYTES + 2),
    ),
)


@given(names, _near_keys)
def test_table_name_under_refuses_what_decode_key_refuses(namespace: str, tail: str) -> None:
    """A damaged key under the prefix: the fast path answers exactly as decode_key does."""
    prefix = keys.namespace_tables_prefix(namespace, LIMITS)
    key = prefix + tail
    try:
        expected = keys.decode_key(key, LIMITS).table
    except InvalidNameError:
        with pytest.raises(InvalidNameError):
            keys.table_name_under(key, prefix, LIMITS)
    else:
        assert keys.table_name_under(key, prefix, LIMITS) == expected
