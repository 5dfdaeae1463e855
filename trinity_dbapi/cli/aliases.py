"""Other shells' spellings of the shell's commands, and the nearest command to a typo.

A psql user types ``\\q``, ``\\dt`` or ``\\d orders``; psql 11+ and sqlite3 users
type ``help``, ``quit`` or ``exit`` alone on a line. :func:`translate` turns
such a line, typed at the start of a statement, into the shell's own
command: a dot-command line, or the SQL that answers it. A ``\\name`` that is
one of the shell's dot-commands runs it (``\\timing on`` is ``.timing on``).
:func:`nearest` finds the command a typo meant, by edit distance.

Imports from cli/: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Words that mean a command when typed alone at the start of a statement
#: (with or without ``;``), as psql 11+ takes them.
BARE_WORDS = {"help": ".help", "quit": ".quit", "exit": ".quit"}

#: psql's backslash commands, and what each one runs here: a dot-command
#: line, or a function of the arguments giving the SQL that answers it.
BACKSLASH_COMMANDS = {
    "\\q": ".quit",
    "\\?": ".help",
    "\\h": ".help",
    "\\dt": ".tables",
    "\\dn": "SHOW NAMESPACES",
    "\\c": ".open",
    "\\connect": ".open",
    "\\timing": ".timer",
    "\\x": ".expanded",
}


def is_command(line: str) -> bool:
    """Whether ``line``, typed at the start of a statement, is a command rather than SQL.

    Dot-commands and backslash commands always are; ``help``, ``quit`` and
    ``exit`` are when alone on the line (a ``;`` may follow).
    """
    stripped = line.strip()
    if stripped.startswith((".", "\\")):
        return True
    return stripped.rstrip(";").strip().lower() in BARE_WORDS


def translate(line: str, meta_names: Iterable[str]) -> str:
    """The shell's own command for a command line of another shell's habits.

    Args:
        line: a line for which :func:`is_command` holds.
        meta_names: the names of the shell's dot-commands (without the dot).

    Returns:
        A dot-command line (``.tables``), SQL (``DESCRIBE orders``, not
        starting with ``.``), or ``line`` unchanged when it names nothing
        known (the caller then reports an unknown command).
    """
    stripped = line.strip()
    word = stripped.rstrip(";").strip().lower()
    if word in BARE_WORDS:
        return BARE_WORDS[word]
    if not stripped.startswith("\\"):
        return stripped
    name, _, rest = stripped.partition(" ")
    rest = rest.strip().rstrip(";").strip()
    lowered = name.lower()
    if lowered in ("\\d", "\\d+"):
        # \d alone lists the tables; \d name describes one, as psql does.
        return f"DESCRIBE {rest}" if rest else ".tables"
    target = BACKSLASH_COMMANDS.get(lowered)
    if target is None and lowered[1:] in set(meta_names):
        target = "." + lowered[1:]
    if target is None:
        return stripped
    return f"{target} {rest}".strip()


def command_names(meta_names: Iterable[str]) -> list[str]:
    """Every command a user may type: ``.name`` for each dot-command, then psql's."""
    return [*(f".{name}" for name in meta_names), *BACKSLASH_COMMANDS, "\\d"]


def edit_distance(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours turning ``a`` into ``b``.

    The optimal string alignment distance: ``tabels`` is one swap from
    ``tables``.
    """
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        row = [i]
        for j, other in enumerate(b, 1):
            cost = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (char != other))
            if i > 1 and j > 1 and char == b[j - 2] and a[i - 2] == other:
                cost = min(cost, previous2[j - 2] + 1)
            row.append(cost)
        previous2, previous = previous, row
    return previous[-1]


def nearest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` most likely meant, or None when none is close.

    Close means within two edits, and fewer edits than half the word's
    length (so that ``.x`` does not suggest ``.help``); a word that starts
    a single candidate suggests it too (``.tab``: ``.tables``).
    """
    lowered = word.lower()
    scored = sorted((edit_distance(lowered, name.lower()), name) for name in candidates)
    if scored and scored[0][0] <= min(2, (len(lowered) - 1) // 2):
        return scored[0][1]
    starting = [name for _, name in scored if name.lower().startswith(lowered)]
    return starting[0] if len(starting) == 1 and len(lowered) > 2 else None
