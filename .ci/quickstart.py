"""Print the README's two Quickstart commands, one per line, for .ci/run to run as written.

The Quickstart section is the text under ``## Quickstart`` up to the next
``## `` heading; its commands are its ```bash blocks, one command line each.
Exactly two are expected, the demo's first: anything else is an error, so
the README and CI cannot drift apart. Standard library only: it runs before
anything is installed.

``--test-minutes`` prints instead the time the README states for the second
command ("... runs the whole suite in about N minutes on two cores"): .ci/run
fails when the command takes more than 1.5 times as long, so the figure stays
true.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _section(text: str) -> str:
    """The text under ``## Quickstart`` up to the next ``## `` heading."""
    section = re.search(r"^## Quickstart\n(.*?)(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    if section is None:
        raise ValueError("README.md has no '## Quickstart' section")
    return section.group(1)


def quickstart_commands(text: str) -> list[str]:
    """The command lines of the ```bash blocks of the Quickstart section."""
    blocks = re.findall(r"^```bash\n(.*?)^```", _section(text), re.DOTALL | re.MULTILINE)
    commands = []
    for block in blocks:
        lines = [line for line in block.splitlines() if line.strip()]
        if len(lines) != 1:
            raise ValueError(f"a Quickstart block must hold one command line, not {lines!r}")
        commands.append(lines[0])
    if len(commands) != 2:
        raise ValueError(f"the Quickstart must have exactly two commands, not {commands!r}")
    return commands


#: The numbers the README may spell its test time with.
_WORDS = """zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen twenty"""
_NUMBERS = {word: value for value, word in enumerate(_WORDS.split())}


def stated_test_minutes(text: str) -> int:
    """The minutes the Quickstart says its test command takes on two cores."""
    said = re.search(
        r"runs the whole\s+(?:default\s+)?suite in about\s+(\w+)\s+minutes\s+on\s+two\s+cores",
        _section(text),
    )
    if said is None:
        raise ValueError(
            "the Quickstart must say how long its test command takes: "
            "'runs the whole suite in about N minutes on two cores'"
        )
    word = said.group(1).lower()
    if word.isdigit():
        return int(word)
    if word not in _NUMBERS:
        raise ValueError(f"the Quickstart's test time {word!r} is not a number CI can check")
    return _NUMBERS[word]


def main() -> int:
    text = README.read_text(encoding="utf-8")
    try:
        if sys.argv[1:] == ["--test-minutes"]:
            print(stated_test_minutes(text))
            return 0
        commands = quickstart_commands(text)
    except ValueError as exc:
        print(f"quickstart.py: {exc}", file=sys.stderr)
        return 1
    print("\n".join(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
