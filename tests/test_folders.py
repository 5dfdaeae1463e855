"""Inside each folder: a floor plan the imports keep, and a tests folder beside it.

Each package folder lists its modules in floors, bottom to top, in its
``__init__.py`` docstring; each module's docstring ends with the siblings it
imports; ``docs/architecture.md`` draws the same floors; and
``trinity_dbapi/x/y/`` is tested in ``tests/x/y/``. Read with ``ast``, like
``tests/test_architecture.py``, whose import reader this uses.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_architecture import PACKAGE, imported, module_name, modules

TESTS = PACKAGE.parent / "tests"

#: Package folders whose tests live elsewhere, and why.
TESTED_ELSEWHERE = {
    "format/proto": "generated protobuf code: tests/format checks it against trinity.proto",
}


def package_folders(package: Path = PACKAGE) -> list[str]:
    """Every folder of the package that is a Python package, as a path below it."""
    return sorted(
        str(init.parent.relative_to(package))
        for init in package.rglob("__init__.py")
        if init.parent != package
    )


def untested_folders(package: Path = PACKAGE, tests: Path = TESTS) -> list[str]:
    """Package folders without a tests folder of the same path holding a test module."""
    return [
        folder
        for folder in package_folders(package)
        if folder not in TESTED_ELSEWHERE and not any((tests / folder).glob("test_*.py"))
    ]


def test_tests_mirror_the_package() -> None:
    """``trinity_dbapi/x/y/`` is tested in ``tests/x/y/``: a reader finds a module's tests by its path."""
    assert untested_folders() == []
    assert set(TESTED_ELSEWHERE) <= set(package_folders())


def test_an_untested_folder_is_seen(tmp_path: Path) -> None:
    package = tmp_path / "trinity_dbapi"
    tests = tmp_path / "tests"
    for folder in ("sql", "sql/engine", "cli"):
        (package / folder).mkdir(parents=True, exist_ok=True)
        (package / folder / "__init__.py").touch()
    (tests / "sql").mkdir(parents=True)
    (tests / "sql" / "test_dialect.py").touch()
    (tests / "cli").mkdir()
    (tests / "cli" / "helpers.py").touch()
    assert untested_folders(package, tests) == ["cli", "sql/engine"]


#: A folder's floors: in its ``__init__.py`` docstring, after a line that
#: says "Floors, bottom to top", one numbered item per floor naming its
#: modules in double backquotes; what stands in parentheses is prose.
_FLOORS_HEADING = re.compile(r"^Floors, bottom to top\b.*$", re.MULTILINE)
_FLOOR_ITEM = re.compile(r"^(\d+)\. (.+(?:\n {2,}.+)*)", re.MULTILINE)


def _without_parentheses(text: str) -> str:
    while True:
        shorter = re.sub(r"\([^()]*\)", "", text)
        if shorter == text:
            return text
        text = shorter


def declared_floors(folder: Path) -> dict[str, int] | None:
    """Module -> floor as ``folder/__init__.py`` lists them (None: no list)."""
    init = folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    heading = _FLOORS_HEADING.search(doc)
    if heading is None:
        return None
    floors: dict[str, int] = {}
    for number, text in _FLOOR_ITEM.findall(doc[heading.end() :]):
        for name in re.findall(r"``(\w+)``", _without_parentheses(text)):
            if (folder / f"{name}.py").is_file():
                assert name not in floors, f"{folder.name}/{name} is on two floors"
                floors[name] = int(number)
    return floors


def floor_violations(package: Path = PACKAGE) -> list[str]:
    """What breaks a folder's floor plan: a module on no floor, an import on its floor or up."""
    found = []
    for rel in package_folders(package):
        if rel in GENERATED_FOLDERS:
            continue
        folder = package / rel
        floors = declared_floors(folder)
        if floors is None:
            found.append(f"{rel}/__init__.py lists no floors")
            continue
        stems = {p.stem for p in folder.glob("*.py") if p.name != "__init__.py"}
        found += [f"{rel}/{name}.py is on no floor" for name in sorted(stems - set(floors))]
        for name in sorted(stems & set(floors)):
            path = folder / f"{name}.py"
            for line, kind, target in imported(path, package):
                parent, _, sibling = target.rpartition(".")
                if parent != module_name(folder / "__init__.py", package) or sibling == name:
                    continue
                if sibling in floors and floors[sibling] >= floors[name]:
                    found.append(
                        f"{rel}/{name}.py:{line} ({kind}, floor {floors[name]}) imports "
                        f"{sibling} (floor {floors[sibling]})"
                    )
    return found


#: Folders of generated code, which has no floor plan of its own.
GENERATED_FOLDERS = {"format/proto"}


def test_every_folder_has_floors_its_imports_keep() -> None:
    """Inside a folder too, a reader knows which sibling a module may import.

    Each folder lists its modules in floors, bottom to top; a module imports
    only modules on lower floors, in any form (top, function, type checking,
    string).
    """
    assert floor_violations() == []


_IMPORTS_LINE = re.compile(r"^Imports from ([\w/]+)/: (.+?)\.\s*\Z", re.MULTILINE | re.DOTALL)


def stated_imports(path: Path) -> tuple[str, set[str]] | None:
    """(folder, siblings) a module's docstring says it imports: its last paragraph."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    stated = _IMPORTS_LINE.search(doc.split("\n\n")[-1])
    if stated is None:
        return None
    names = set(re.findall(r"\w+", stated[2].replace("inside functions:", ""))) - {"nothing"}
    return stated[1], names


def misstated_imports(package: Path = PACKAGE) -> list[str]:
    """Modules whose closing "Imports from <folder>/: ..." line is missing or wrong."""
    found = []
    for path in modules(package):
        rel = path.parent.relative_to(package)
        if path.name == "__init__.py" or str(rel) in {".", *GENERATED_FOLDERS}:
            continue
        here = module_name(path, package)
        actual = {
            target.rpartition(".")[2]
            for _, _, target in imported(path, package)
            if target.rpartition(".")[0] == here.rpartition(".")[0] and target != here
        }
        stated = stated_imports(path)
        if stated is None or stated != (str(rel), actual):
            found.append(f"{rel}/{path.name}: states {stated}, imports {sorted(actual)}")
    return found


def test_every_module_states_the_siblings_it_imports() -> None:
    """Each module's docstring ends with the siblings it imports, kept true by this test."""
    assert misstated_imports() == []


def test_floor_checks_see_a_wrong_plan(tmp_path: Path) -> None:
    """The checkers themselves: a lazy import on its own floor, a module on none, a wrong line."""
    package = tmp_path / "trinity_dbapi"
    folder = package / "tree"
    folder.mkdir(parents=True)
    (package / "__init__.py").touch()
    (folder / "__init__.py").write_text(
        '"""Trees.\n\nFloors, bottom to top:\n\n1. ``node`` (cells), ``btree``\n"""\n',
        encoding="utf-8",
    )
    (folder / "node.py").write_text(
        '"""Nodes.\n\nImports from tree/: nothing.\n"""\n', encoding="utf-8"
    )
    (folder / "btree.py").write_text(
        '"""B-trees.\n\nImports from tree/: nothing.\n"""\n'
        "def f():\n    from trinity_dbapi.tree import node\n",
        encoding="utf-8",
    )
    (folder / "cache.py").write_text('"""Caches."""\n', encoding="utf-8")
    assert floor_violations(package) == [
        "tree/cache.py is on no floor",
        "tree/btree.py:6 (function, floor 1) imports node (floor 1)",
    ]
    assert misstated_imports(package) == [
        "tree/btree.py: states ('tree', set()), imports ['node']",
        "tree/cache.py: states None, imports []",
    ]


ARCHITECTURE_MD = PACKAGE.parent / "docs" / "architecture.md"


def drawn_floors(page: Path = ARCHITECTURE_MD) -> dict[str, dict[str, int]]:
    """Folder -> module -> floor, as the page's "Floors inside the folders" table draws them."""
    text = page.read_text(encoding="utf-8")
    section = text.split("## Floors inside the folders", 1)[1].split("\n## ", 1)[0]
    drawn: dict[str, dict[str, int]] = {}
    for folder, cells in re.findall(r"^\| `([\w/]+)/` \| (.+) \|$", section, re.MULTILINE):
        drawn[folder] = {
            name: int(number)
            for number, names in re.findall(r"(\d+): ([^·]+)", cells)
            for name in re.findall(r"`(\w+)`", names)
        }
    return drawn


def test_the_architecture_page_draws_the_floors_the_code_declares() -> None:
    declared = {
        rel: declared_floors(PACKAGE / rel)
        for rel in package_folders()
        if rel not in GENERATED_FOLDERS
    }
    assert drawn_floors() == declared
