"""The rule for new names (format/names.py, issue 29 items 7 and 8).

The rule is checked against an oracle written from the Unicode properties it
names (categories, NFC), over generated names rich in the characters it is
about, and against the look-alike pairs that motivated it. The definitions'
``check_new_names`` apply it to the names a definition introduces only.
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinity_dbapi.errors import InvalidNameError
from trinity_dbapi.format import names
from trinity_dbapi.format.definitions import (
    Column,
    DataType,
    LakehouseDefinition,
    NamespaceDefinition,
    TableDefinition,
    ViewDefinition,
)

#: Characters that render as nothing or steer direction: the brief's list.
INVISIBLE = [
    "\u00ad",  # soft hyphen
    "\u200b",  # zero width space
    "\u200c",  # zero width non-joiner
    "\u200d",  # zero width joiner
    "\u2060",  # word joiner
    "\ufeff",  # zero width no-break space (BOM)
    "\u034f",  # combining grapheme joiner
    "\ufe0f",  # variation selector 16
    "\U000e0041",  # tag latin capital letter a
    "\u3164",  # hangul filler
]
BIDI = ["\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2069"]
CONTROLS = ["\x00", "\t", "\n", "\r", "\x1b", "\x7f", "\x85", "\x9f"]
SPACES = ["\u00a0", "\u2002", "\u3000", "\u2028", "\u2029", "\u202f"]

#: Default_Ignorable_Code_Point outside category Cf (DerivedCoreProperties.txt,
#: written out here independently of the module's pattern).
_IGNORABLE_NOT_CF = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2065, 0x3164, 0xFFA0}
_IGNORABLE_RANGES = [(0x180B, 0x180F), (0xFE00, 0xFE0F), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF)]


def allowed_by_oracle(name: str) -> bool:
    """The rule, from the Unicode properties it names."""
    for char in name:
        code = ord(char)
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Cs", "Zl", "Zp") or (category == "Zs" and char != " "):
            return False
        if code in _IGNORABLE_NOT_CF or any(lo <= code <= hi for lo, hi in _IGNORABLE_RANGES):
            return False
    return unicodedata.normalize("NFC", name) == name


#: Names built from the characters the rule is about, and ordinary ones.
OTHERS = ["\u0301", "\u030a", "\u0327", "\u00e9", "e", "A", " ", "a", "_", "日", "😀", "Å"]
interesting = st.sampled_from(
    [*INVISIBLE, *BIDI, *CONTROLS, *SPACES, *OTHERS, "\u212b", "\ufb01", "%", '"', ".", "\u0430"]
)
name_text = st.text(interesting, min_size=1, max_size=8) | st.text(min_size=1, max_size=8)


@given(name_text)
def test_the_rule_is_the_oracle(name: str) -> None:
    problem = names.new_name_problem(name)
    assert (problem is None) == allowed_by_oracle(name), (name, problem)
    if problem is None:
        names.check_new_name(name, "column")
    else:
        with pytest.raises(InvalidNameError) as info:
            names.check_new_name(name, "column", "of table ns.t")
        assert info.value.name == name
        assert ascii(name) in str(info.value)  # hidden characters show escaped
        assert "of table ns.t" in str(info.value)


@given(name_text.filter(allowed_by_oracle), st.sampled_from(INVISIBLE + BIDI), st.data())
def test_an_allowed_name_with_an_invisible_character_is_refused(
    name: str, char: str, data: st.DataObject
) -> None:
    # Whatever renders as nothing cannot make a second name that looks like the first.
    position = data.draw(st.integers(0, len(name)))
    twin = name[:position] + char + name[position:]
    problem = names.new_name_problem(twin)
    assert problem is not None
    assert f"U+{ord(char):04X}" in problem


@given(name_text.filter(allowed_by_oracle))
def test_only_the_nfc_spelling_of_a_name_is_allowed(name: str) -> None:
    # Of two canonically equivalent spellings, at most one is allowed.
    for form in ("NFD", "NFKC", "NFKD"):
        other = unicodedata.normalize(form, name)
        if other != name and unicodedata.normalize("NFC", other) == name:
            assert names.new_name_problem(other) is not None


@given(st.text(st.characters(max_codepoint=0x7F), min_size=1))
def test_ascii_names_are_refused_only_for_controls(name: str) -> None:
    expected = not any(ord(c) < 0x20 or ord(c) == 0x7F for c in name)
    assert (names.new_name_problem(name) is None) == expected


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("a\x00b", "U+0000 at position 1 is a control character"),
        ("a\u200bb", "U+200B ZERO WIDTH SPACE at position 1 renders as nothing"),
        ("abc\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE at position 3 is a bidirectional control"),
        ("a\u00a0b", "U+00A0 NO-BREAK SPACE at position 1 is a space or line break"),
        ("\u00adx", "U+00AD SOFT HYPHEN at position 0 renders as nothing"),
    ],
)
def test_messages_name_the_character_its_position_and_the_rule(name: str, shown: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        names.check_new_name(name, "column", "of table ns.t")
    message = str(info.value)
    assert shown in message
    assert message.startswith(f"invalid column name {name!r}")
    assert "docs/format.md" in message
    assert message.endswith("remove that character")


def test_nfd_message_shows_the_nfc_form_and_the_fix() -> None:
    nfd = "cafe\u0301"
    with pytest.raises(InvalidNameError) as info:
        names.check_new_object_name(nfd, "table", "in namespace ns")
    message = str(info.value)
    assert "'cafe\\u0301'" in message  # the escaped spelling tells the two apart
    assert "'caf\\xe9'" in message
    assert "in namespace ns" in message
    assert "not in Unicode normalization form NFC" in message
    assert "unicodedata.normalize('NFC', name)" in message
    names.check_new_object_name("caf\u00e9", "table")


def test_object_names_keep_the_seed_rule_too() -> None:
    with pytest.raises(InvalidNameError, match="U\\+0020"):
        names.check_new_object_name("a b", "table")
    names.check_new_name("a b", "column")  # columns may hold U+0020, as SQL allows


@pytest.mark.parametrize("bad", ["", 3, None])
def test_empty_or_non_str_names(bad: object) -> None:
    with pytest.raises(InvalidNameError, match="property key"):
        names.check_new_name(bad, "property key")  # type: ignore[arg-type]


# --- definitions: the names a definition introduces --------------------------------


def _table(columns: list[Column], **fields: object) -> TableDefinition:
    return TableDefinition("t", columns, table_format="kartothek", **fields)  # type: ignore[arg-type]


INT = DataType("int4")


def test_a_definition_an_older_release_wrote_is_valid_and_keeps_its_names() -> None:
    # Definitions still hold any name the seed allows: reading never refuses.
    legacy = _table(
        [Column(1, "a\u200bb", INT), Column(2, "cafe\u0301", INT, properties={"k\t": "v"})],
        properties={"p\u00ad": "1"},
    )
    assert TableDefinition.from_bytes(legacy.to_bytes(), "t.binpb") == legacy
    with pytest.raises(InvalidNameError, match="U\\+200B"):
        legacy.check_new_names(None, namespace="ns")  # as a new table: refused
    # A change that keeps those names, adds valid ones and renames nothing passes.
    added = legacy.replace(
        columns=(*legacy.columns, Column(3, "c", INT, properties={"ok": "1"})),
        properties={**legacy.properties, "q": "2"},
    )
    added.check_new_names(legacy, namespace="ns")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace(name="t\u200b"), "invalid table name 't\\u200b' in namespace ns"),
        (
            lambda t: t.replace(columns=(Column(1, "x\u200b", INT),)),
            "invalid column name 'x\\u200b' of table ns.t",
        ),
        (
            lambda t: t.replace(columns=(*t.columns, Column(2, "a\x00b", INT))),
            "invalid column name 'a\\x00b' of table ns.t",
        ),
        (
            lambda t: t.replace(
                columns=(
                    *t.columns,
                    Column(2, "s", DataType.struct_of(Column(3, "f\u202e", INT))),
                )
            ),
            "invalid field name 'f\\u202e' of column 's' of table ns.t",
        ),
        (
            lambda t: t.replace(columns=(Column(1, "x", INT, properties={"k\x00": "v"}),)),
            "invalid property key 'k\\x00' of column 'x' of table ns.t",
        ),
        (
            lambda t: t.replace(properties={"cafe\u0301": "v"}),
            "invalid property key 'cafe\u0301' (escaped: 'cafe\\u0301') of table ns.t",
        ),
        (
            lambda t: t.replace(format_properties={"index.i\u2060": "x"}),
            "invalid format property key 'index.i\\u2060' of table ns.t",
        ),
    ],
)
def test_a_new_name_in_a_changed_table_is_checked(change: object, message: str) -> None:
    before = _table([Column(1, "x", INT)])
    after = change(before)  # type: ignore[operator]
    with pytest.raises(InvalidNameError) as info:
        after.check_new_names(before, namespace="ns")
    assert str(info.value).startswith(message)


def test_a_renamed_legacy_column_must_take_a_valid_name() -> None:
    legacy = _table([Column(1, "a\u200bb", INT)])
    renamed = legacy.replace(columns=(Column(1, "ab", INT),))
    renamed.check_new_names(legacy)
    back = renamed.replace(columns=(Column(1, "a\u200bb", INT),))
    with pytest.raises(InvalidNameError):
        back.check_new_names(renamed)


def test_namespace_view_and_lakehouse_definitions_check_what_they_introduce() -> None:
    legacy_ns = NamespaceDefinition("n\u200b", {"k\u200b": "v"})
    NamespaceDefinition("n\u200b", {"k\u200b": "v", "ok": "1"}).check_new_names(legacy_ns)
    with pytest.raises(InvalidNameError, match="invalid namespace name"):
        legacy_ns.check_new_names(None)
    with pytest.raises(InvalidNameError, match="invalid property key 'j\\\\t' of namespace n"):
        NamespaceDefinition("n", {"j\t": "v"}).check_new_names(NamespaceDefinition("n"))

    view = ViewDefinition("v", (Column(1, "a\u200b", INT),), sql={"trinity": "SELECT 1"})
    with pytest.raises(InvalidNameError, match=r"invalid column name 'a\\u200b' of view ns\.v"):
        view.check_new_names(None, namespace="ns")
    view.check_new_names(view, namespace="ns")  # CREATE OR REPLACE keeping the column

    lake = LakehouseDefinition("lake", properties={"k\x00": "v"})
    with pytest.raises(InvalidNameError, match="property key 'k\\\\x00' of lakehouse 'lake'"):
        lake.check_new_names(None)
    exported = lake.replace(exported_snapshots={"e\u200b": "_0.arrow"})
    exported.check_new_names(lake.replace(exported_snapshots={"e\u200b": "_0.arrow"}))
    with pytest.raises(InvalidNameError, match="exported snapshot name 'e\\\\u200b'"):
        exported.check_new_names(lake)
