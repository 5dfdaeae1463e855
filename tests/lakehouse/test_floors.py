"""lakehouse/ has a floor plan: each module imports only modules on floors below its own.

The floors are listed bottom to top in ``trinity_dbapi/lakehouse/__init__.py``;
each module's docstring gives its floor ("Floor N of ``lakehouse/``") and
names the modules of lakehouse/ it imports ("Imports from lakehouse/: ...").
Both are read here and held to the imports themselves, in every form: at
module top, inside a function, under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_architecture import PACKAGE, imported, module_name

FOLDER = PACKAGE / "lakehouse"


def _modules() -> list[Path]:
    return sorted(p for p in FOLDER.glob("*.py") if p.name != "__init__.py")


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def _siblings(path: Path) -> set[str]:
    """The modules of lakehouse/ that ``path`` imports, in any form."""
    here = module_name(path)
    return {
        target.rpartition(".")[2]
        for _, _, target in imported(path)
        if target.rpartition(".")[0] == "trinity_dbapi.lakehouse" and target != here
    }


def _floors() -> dict[str, int]:
    """Module -> floor, as the package docstring lists them."""
    floors: dict[str, int] = {}
    listing = re.findall(
        r"^(\d+)\. (.+(?:\n   .+)*)", _docstring(FOLDER / "__init__.py"), re.MULTILINE
    )
    for number, text in listing:
        for name in re.findall(r"``(\w+)``", text):
            if (FOLDER / f"{name}.py").is_file():
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
        for name in sorted(_siblings(path))
        if floors[name] >= floors[path.stem]
    ]
    assert upward == []


def test_every_module_states_its_floor_and_its_imports() -> None:
    floors = _floors()
    wrong = []
    for path in _modules():
        doc = _docstring(path)
        floor = re.search(r"^Floor (\d+) of ``lakehouse/``", doc, re.MULTILINE)
        if floor is None or int(floor[1]) != floors[path.stem]:
            wrong.append(
                f"{path.stem}: states floor {floor and floor[1]}, is on {floors[path.stem]}"
            )
        stated = re.search(r"Imports from lakehouse/:\s+([\w,\s]+?)\.", doc)
        named = set() if stated is None else set(re.findall(r"\w+", stated[1])) - {"nothing"}
        if stated is None or named != _siblings(path):
            wrong.append(f"{path.stem}: states {sorted(named)}, imports {sorted(_siblings(path))}")
    assert wrong == []
