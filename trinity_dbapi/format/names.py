"""The rule every new name obeys, so that two names never look the same.

The seed's character rule (:func:`trinity_dbapi.format.keys.check_name_characters`)
only forbids what would break an object key: controls U+0000..U+001F, the
space and DEL. Names are also read by people: SHOW TABLES, DESCRIBE, a
cursor's ``description`` and error messages print them, and two names that
print alike are two objects nobody can tell apart (``café`` written with
U+00E9 and with ``e`` + U+0301; ``ab`` and ``a`` U+200B ``b``), while a NUL
cuts a name short where C strings carry it (DuckDB showed ``a\\x00b`` as
``a``). So every name a write *introduces* obeys one more rule,
:func:`new_name_problem`:

* no control character (Unicode category Cc: NUL, tab, newline, DEL, C1);
* no character that renders as nothing (category Cf: the soft hyphen
  U+00AD, the zero widths U+200B..U+200D, the word joiner U+2060, U+FEFF...,
  and the other default-ignorable code points: variation selectors, the
  combining grapheme joiner, Hangul fillers...);
* no bidirectional control (U+061C, U+200E, U+200F, U+202A..U+202E,
  U+2066..U+2069): they reorder how the characters around them display;
* no space or line break other than U+0020 (categories Zs, Zl, Zp: a
  no-break space looks like a space, a trailing one like nothing);
* no lone surrogate (no UTF-8 form);
* the name is in Unicode normalization form NFC: canonically equivalent
  spellings render alike, and only one of them, NFC, may be created.

Refused, never rewritten: a normalized name would not be the name the user
gave (a DataFrame's column would come back under other code points), and
lookups stay exact. The rule applies to names a write introduces, never to
names already stored, so a lakehouse an older release wrote (with an NFD
name, or a U+200B in one) keeps reading, writing, renaming and dropping its
objects. Case is not part of the rule. docs/format.md ("Object names")
records the decision.

Imports from format/: keys.
"""

from __future__ import annotations

import re
import unicodedata

from trinity_dbapi.errors import InvalidNameError
from trinity_dbapi.format.keys import check_name_characters

__all__ = ["check_new_name", "check_new_object_name", "new_name_problem"]

#: Default_Ignorable_Code_Point (Unicode DerivedCoreProperties) outside
#: category Cf, which is refused as a whole: characters a renderer shows as
#: nothing (the combining grapheme joiner, Hangul fillers, Khmer inherent
#: vowels, Mongolian free variation selectors, variation selectors, and the
#: ranges Unicode reserves for more of them). ``unicodedata`` has no such
#: property, so the ranges are listed.
_IGNORABLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2065\u3164\ufe00-\ufe0f\uffa0"
    "\ufff0-\ufff8\U000e0000-\U000e0fff]"
)
#: Bidirectional controls (all of category Cf, named apart for a clearer
#: message): U+202E makes ``abc`` display as ``cba``.
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
#: The ASCII characters the rule refuses: one C-speed search decides the
#: common case, an ASCII name (always NFC).
_ASCII_REFUSED = re.compile("[\x00-\x1f\x7f]")
_NOT_NFC = "it is not in Unicode normalization form NFC"


def _shown(name: str) -> str:
    """``name`` quoted, plus its escaped form when a terminal would hide or merge characters."""
    quoted = repr(name)
    escaped = ascii(name)
    return quoted if quoted == escaped else f"{quoted} (escaped: {escaped})"


def _character_problem(char: str) -> str | None:
    """Why ``char`` may not be in a new name (None: it may)."""
    code = ord(char)
    if 0x20 <= code < 0x7F:
        return None
    category = unicodedata.category(char)
    if category == "Cs":
        return "is a lone surrogate, which has no UTF-8 form"
    if category == "Cc":
        return "is a control character, which new names may not hold"
    if char in _BIDI_CONTROLS:
        return (
            "is a bidirectional control, which reorders how the name is displayed; new names "
            "may not hold one"
        )
    if category == "Cf" or _IGNORABLE.match(char):
        return (
            "renders as nothing, so the name would look like the name without it; new names "
            "may not hold such characters"
        )
    if category in ("Zl", "Zp") or (category == "Zs" and char != " "):
        return "is a space or line break other than U+0020, which new names may not hold"
    return None


def new_name_problem(name: str) -> str | None:
    """What makes ``name`` unfit as a new name, or None if nothing does.

    See the module docstring for the rule.

    Args:
        name: A str.

    Returns:
        The problem: the first refused character as ``U+XXXX NAME`` with its
        position and the rule it breaks, or that the name is not NFC, with its
        NFC form; None for a name the rule allows.
    """
    if name.isascii() and _ASCII_REFUSED.search(name) is None:
        return None
    for position, char in enumerate(name):
        problem = _character_problem(char)
        if problem is not None:
            label = f"U+{ord(char):04X}"
            if unicodedata.name(char, ""):
                label += f" {unicodedata.name(char)}"
            return f"character {label} at position {position} {problem}"
    if not unicodedata.is_normalized("NFC", name):
        nfc = unicodedata.normalize("NFC", name)
        return (
            f"{_NOT_NFC}, so it would look the same as its NFC form {_shown(nfc)}, another "
            "name; new names must be NFC"
        )
    return None


def check_new_name(name: str, kind: str, where: str = "") -> None:
    """Refuse ``name`` as a new ``kind`` name unless it obeys :func:`new_name_problem`'s rule.

    For the names that are no object key: columns and nested fields, indices,
    exported snapshots, property keys. Namespace, table and view names use
    :func:`check_new_object_name`.

    Args:
        name: The name a write introduces.
        kind: What it names, for messages: ``column``, ``index``,
            ``property key`` (a kind ending in "key" is not followed by "name").
        where: The object it belongs to, for messages (``of table sales.orders``).

    Raises:
        InvalidNameError: The name is not a non-empty str, or breaks the rule;
            the message names the character (or the NFC form) and the fix.
    """
    place = f" {where}" if where else ""
    noun = kind if kind.endswith("key") else f"{kind} name"
    if not isinstance(name, str):
        raise InvalidNameError(
            repr(name), f"{noun}{place} must be a str, got {type(name).__name__} {name!r}"
        )
    if not name:
        raise InvalidNameError(name, f"{noun}{place} must not be empty; give it a name")
    problem = new_name_problem(name)
    if problem is None:
        return
    if problem.startswith(_NOT_NFC):
        fix = "write it in NFC, as unicodedata.normalize('NFC', name) gives it"
    elif "lone surrogate" in problem:
        fix = "use a valid Unicode string"
    else:
        fix = "remove that character"
    raise InvalidNameError(
        name,
        f"invalid {noun} {_shown(name)}{place}: {problem} (docs/format.md, Object names); {fix}",
    )


def check_new_object_name(name: str, kind: str, where: str = "") -> None:
    """Refuse ``name`` as the name of a new namespace, table or view unless it is valid.

    The seed's character rule (:func:`~trinity_dbapi.format.keys.check_name_characters`),
    then the rule for every new name (:func:`check_new_name`); the size is
    checked when the key is encoded.

    Raises:
        InvalidNameError: naming the character, the rule and the fix.
    """
    check_name_characters(name, kind)
    check_new_name(name, kind, where)
