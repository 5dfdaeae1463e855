"""The package's shape: its folders are the layers, and every import points down.

The layers are listed in docs/architecture.md. This test reads every module
with `ast` (nothing is imported) and fails on:

* an import that points up a layer, in any of its four forms: at module
  top, inside a function, under ``TYPE_CHECKING``, or by string (a dotted
  ``trinity_dbapi.…`` name handed to ``importlib`` or a registry; an
  entry-point group setup.cfg declares names no module);
* an import cycle anywhere in the package, in the same four forms;
* a module that sits in no layer;
* a ``sql/`` language module that imports the engine;
* a hand-written module over 650 lines.

Inside each folder, ``tests/test_folders.py`` holds the floors; the rules
of the code that are not about imports are in ``tests/test_code_rules.py``.
"""

from __future__ import annotations

import ast
import configparser
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trinity_dbapi"
MAX_LINES = 650

#: Layer of each top-level name of the package, bottom up. The package root
#: (``trinity_dbapi/__init__.py``) re-exports the driver, so it sits with it.
LAYERS: dict[str, int] = {
    "errors": 0,
    "storage": 1,
    "format": 2,
    "tree": 3,
    "lakehouse": 4,
    "tables": 5,
    "sql": 6,
    "dbapi": 7,
    "": 7,
    "sqlalchemy": 8,
    "duckdb": 8,
    "spark": 8,
    "superset": 8,
    "cli": 9,
    "demo": 9,
}

#: Generated code, not held to the line limit.
GENERATED = {"format/proto/trinity_pb2.py"}

_DOTTED = re.compile(r"^trinity_dbapi(?:\.\w+)+(?::\w+)?$")


def entry_point_groups(setup_cfg: Path = PACKAGE.parent / "setup.cfg") -> frozenset[str]:
    """Entry-point groups setup.cfg declares: dotted names, yet no module of the package."""
    config = configparser.ConfigParser()
    config.read(setup_cfg, encoding="utf-8")
    if not config.has_section("options.entry_points"):
        return frozenset()
    return frozenset(config.options("options.entry_points"))


ENTRY_POINT_GROUPS = entry_point_groups()


def modules(package: Path = PACKAGE) -> list[Path]:
    """Every Python module of the package."""
    return sorted(package.rglob("*.py"))


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``trinity_dbapi.x.y`` for ``trinity_dbapi/x/y.py`` (packages drop ``__init__``)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(dotted: str, package: Path = PACKAGE) -> bool:
    """Whether ``trinity_dbapi.x.y`` names a module or package of the tree."""
    base = package.parent / Path(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def layer_of(dotted: str) -> int | None:
    """The layer a dotted module name belongs to (None: outside every layer)."""
    parts = dotted.split(".")
    assert parts[0] == "trinity_dbapi", dotted
    return LAYERS.get(parts[1] if len(parts) > 1 else "")


def imported(path: Path, package: Path = PACKAGE) -> Iterator[tuple[int, str, str]]:
    """(line, kind, module) of every package module ``path`` imports.

    The kinds are ``top``, ``function``, ``type-checking`` and ``string``.
    ``from trinity_dbapi import errors`` imports the submodule; ``from
    trinity_dbapi import connect`` imports the package root.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = module_name(path, package)
    if path.name != "__init__.py":
        here = here.rpartition(".")[0]
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }

    def kind_of(stack: list[ast.AST]) -> str:
        for node in reversed(stack):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return "function"
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                return "type-checking"
        return "top"

    def visit(node: ast.AST, stack: list[ast.AST]) -> Iterator[tuple[int, str, str]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "trinity_dbapi":
                    yield node.lineno, kind_of(stack), alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] == "trinity_dbapi":
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    target = sub if is_module(sub, package) else source
                    yield node.lineno, kind_of(stack), target
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and _DOTTED.match(node.value)
            and node.value not in ENTRY_POINT_GROUPS
        ):
            dotted = node.value.partition(":")[0]
            while dotted and not is_module(dotted, package):
                dotted = dotted.rpartition(".")[0]
            if dotted:
                yield node.lineno, "string", dotted
        for child in ast.iter_child_nodes(node):
            yield from visit(child, [*stack, node])

    yield from visit(tree, [])


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """Every import from a lower layer to a higher one, as readable lines."""
    found = []
    for path in modules(package):
        own = layer_of(module_name(path, package))
        if own is None:
            continue
        for line, kind, target in imported(path, package):
            theirs = layer_of(target)
            if theirs is not None and theirs > own:
                rel = path.relative_to(package.parent)
                found.append(f"{rel}:{line} ({kind}) imports {target} (layer {theirs} > {own})")
    return found


def test_every_import_points_down() -> None:
    assert upward_imports() == []


def test_every_module_sits_in_a_layer() -> None:
    outside = [str(p.relative_to(PACKAGE)) for p in modules() if layer_of(module_name(p)) is None]
    assert outside == []


def test_no_module_is_over_the_line_limit() -> None:
    lines = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in modules()
    }
    long = {name: n for name, n in lines.items() if n > MAX_LINES and name not in GENERATED}
    assert long == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from trinity_dbapi import FORMAT_MAJOR_VERSION\n", "top"),
        ("def f():\n    from trinity_dbapi.dbapi import connect\n", "function"),
        (
            (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from trinity_dbapi.sql.engine.session import Session\n"
            ),
            "type-checking",
        ),
        (
            "import importlib\nX = importlib.import_module('trinity_dbapi.tables.managed')\n",
            "string",
        ),
    ],
)
def test_each_kind_of_upward_import_is_seen(tmp_path: Path, source: str, expected: str) -> None:
    """The checker itself: a format module importing up, in each of the four forms."""
    package = tmp_path / "trinity_dbapi"
    for name in (
        "__init__.py",
        "format/__init__.py",
        "dbapi/__init__.py",
        "tables/managed.py",
        "tables/__init__.py",
        "sql/__init__.py",
        "sql/engine/__init__.py",
        "sql/engine/session.py",
    ):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).touch()
    probe = package / "format" / "probe.py"
    probe.write_text(source, encoding="utf-8")
    kinds = {kind for _, kind, target in imported(probe, package) if (layer_of(target) or 0) > 2}
    assert kinds == {expected}
    assert len(upward_imports(package)) == 1


def test_the_sql_language_does_not_import_the_engine() -> None:
    """``sql/`` (dialect, parser, statement model) stands without ``sql/engine/``, which runs it."""
    language = list((PACKAGE / "sql").glob("*.py"))
    found = [
        f"{p.relative_to(PACKAGE)}:{line} ({kind}) imports {target}"
        for p in language
        for line, kind, target in imported(p)
        if target == "trinity_dbapi.sql.engine" or target.startswith("trinity_dbapi.sql.engine.")
    ]
    assert language and found == []


#: Import cycles the package keeps, each with its reason (none today). A
#: cycle is named by its modules, ``trinity_dbapi.`` left off.
CYCLES_KEPT: dict[frozenset[str], str] = {}


def import_edges(package: Path = PACKAGE) -> dict[str, dict[str, list[str]]]:
    """Who imports whom inside the package: module -> imported module -> where.

    Every form counts (module top, inside a function, under
    ``TYPE_CHECKING``, a dotted string): a cycle held together by a lazy
    import is still a cycle a reader has to untangle. "Where" is
    ``path:line (kind)``.
    """
    edges: dict[str, dict[str, list[str]]] = {}
    for path in modules(package):
        here = module_name(path, package)
        rel = path.relative_to(package.parent)
        for line, kind, target in imported(path, package):
            if target == here:
                continue
            places = edges.setdefault(here, {}).setdefault(target, [])
            where = f"{rel}:{line} ({kind})"
            if where not in places:  # one line importing several names is one import
                places.append(where)
    return edges


def import_cycles(package: Path = PACKAGE) -> list[list[str]]:
    """Every set of modules that import one another in a circle (Tarjan's components)."""
    edges = import_edges(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # recursion depth is bounded by the module count
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def describe_cycle(cycle: list[str], package: Path = PACKAGE) -> str:
    """A cycle as the imports that close it, one per line."""
    edges = import_edges(package)
    members = set(cycle)
    lines = [
        f"  {where} imports {target}"
        for source in cycle
        for target, places in sorted(edges.get(source, {}).items())
        if target in members
        for where in places
    ]
    return "\n".join([f"cycle of {len(cycle)} modules:", *lines])


def test_no_import_cycle() -> None:
    """No modules import one another in a circle, lazily or not, inside a folder or across.

    The layers test keeps imports between folders pointing down; this one
    gives every folder a floor plan too: each module imports only modules
    below it. Every cycle kept must be listed, with its reason, in
    ``CYCLES_KEPT``.
    """
    short = [frozenset(m.removeprefix("trinity_dbapi.") for m in c) for c in import_cycles()]
    unlisted = [c for c, key in zip(import_cycles(), short, strict=True) if key not in CYCLES_KEPT]
    assert not unlisted, "\n".join(describe_cycle(c) for c in unlisted)
    assert set(CYCLES_KEPT) <= set(short), "a kept cycle is gone: drop it from CYCLES_KEPT"


def test_a_lazy_cycle_inside_a_folder_is_seen(tmp_path: Path) -> None:
    """The checker itself: a cycle closed by a function-level and a TYPE_CHECKING import."""
    package = tmp_path / "trinity_dbapi"
    engine = package / "sql" / "engine"
    engine.mkdir(parents=True)
    for init in (package, package / "sql", engine):
        (init / "__init__.py").touch()
    (engine / "session.py").write_text(
        "def execute():\n    from trinity_dbapi.sql.engine import handlers\n", encoding="utf-8"
    )
    (engine / "handlers.py").write_text(
        "from trinity_dbapi.sql.engine.query import run\n", encoding="utf-8"
    )
    (engine / "query.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from trinity_dbapi.sql.engine.session import Session\n",
        encoding="utf-8",
    )
    (engine / "show.py").write_text(
        "from trinity_dbapi.sql.engine.session import execute\n", encoding="utf-8"
    )
    cycles = import_cycles(package)
    assert cycles == [
        [
            "trinity_dbapi.sql.engine.handlers",
            "trinity_dbapi.sql.engine.query",
            "trinity_dbapi.sql.engine.session",
        ]
    ]
    text = describe_cycle(cycles[0], package)
    assert "sql/engine/session.py:2 (function) imports trinity_dbapi.sql.engine.handlers" in text
    assert "sql/engine/query.py:3 (type-checking) imports trinity_dbapi.sql.engine.session" in text
