"""tables/ has a floor plan: each module imports only modules on floors below its own.

The floors are listed bottom to top in ``trinity_dbapi/tables/__init__.py``;
each module's docstring names the modules of tables/ it imports ("Imports
from tables/: ..."). Both are read here and held to the imports themselves,
in every form: at module top, inside a function, under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_architecture import PACKAGE, imported, module_name

FOLDER = PACKAGE / "tables"


def _modules() -> list[Path]:
    return sorted(p for p in FOLDER.glob("*.py") if p.name != "__init__.py")


def _siblings(path: Path) -> dict[str, set[str]]:
    """The modules of tables/ ``path`` imports, each with the kinds of its imports."""
    here = module_name(path)
    found: dict[str, set[str]] = {}
    for _, kind, target in imported(path):
        parent, _, name = target.rpartition(".")
        if parent == "trinity_dbapi.tables" and target != here:
            found.setdefault(name, set()).add(kind)
    return found


def _floors() -> dict[str, int]:
    """Module -> floor, as the package docstring lists them."""
    doc = ast.get_docstring(ast.parse((FOLDER / "__init__.py").read_text(encoding="utf-8")))
    assert doc is not None
    floors: dict[str, int] = {}
    for number, text in re.findall(r"^(\d+)\. (.+(?:\n   .+)*)", doc, re.MULTILINE):
        for name in re.findall(r"``(\w+)``", text):
            assert name not in floors, f"{name} is listed on two floors"
            floors[name] = int(number)
    return floors


def test_every_module_is_on_a_floor() -> None:
    assert set(_floors()) == {p.stem for p in _modules()}


def test_every_import_points_to_a_lower_floor() -> None:
    floors = _floors()
    upward = [
        f"{path.stem} (floor {floors[path.stem]}) imports {name} (floor {floors[name]})"
        for path in _modules()
        for name in _siblings(path)
        if floors[name] >= floors[path.stem]
    ]
    assert upward == []


def test_every_module_names_what_it_imports() -> None:
    wrong = []
    for path in _modules():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        stated = re.search(r"Imports from tables/: (.+?)\.(?:\n\n|\Z)", doc, re.DOTALL)
        if stated is None:
            wrong.append(f"{path.stem}: no 'Imports from tables/: ...' line")
            continue
        # "a, b (why); inside functions: c": the names, without the prose in parentheses.
        text = re.sub(r"\([^)]*\)", "", stated[1]).replace("inside functions:", "")
        named = set(re.findall(r"\w+", text)) - {"nothing"}
        if named != set(_siblings(path)):
            wrong.append(f"{path.stem}: states {sorted(named)}, imports {sorted(_siblings(path))}")
    assert wrong == []
