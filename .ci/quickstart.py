"""Print the README's two Quickstart commands, one per line, for .ci/run to run as written.

The Quickstart section is the text under ``## Quickstart`` up to the next
``## `` heading; its commands are its ```bash blocks, one command line each.
Exactly two are expected, the demo's first: anything else is an error, so
the README and CI cannot drift apart. Standard library only: it runs before
anything is installed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def quickstart_commands(text: str) -> list[str]:
    """The command lines of the ```bash blocks of the Quickstart section."""
    section = re.search(r"^## Quickstart\n(.*?)(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    if section is None:
        raise ValueError("README.md has no '## Quickstart' section")
    blocks = re.findall(r"^```bash\n(.*?)^```", section.group(1), re.DOTALL | re.MULTILINE)
    commands = []
    for block in blocks:
        lines = [line for line in block.splitlines() if line.strip()]
        if len(lines) != 1:
            raise ValueError(f"a Quickstart block must hold one command line, not {lines!r}")
        commands.append(lines[0])
    if len(commands) != 2:
        raise ValueError(f"the Quickstart must have exactly two commands, not {commands!r}")
    return commands


def main() -> int:
    try:
        commands = quickstart_commands(README.read_text(encoding="utf-8"))
    except ValueError as exc:
        print(f"quickstart.py: {exc}", file=sys.stderr)
        return 1
    print("\n".join(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
