"""The package's shape: its folders are the layers, and every import points down.

The layers are listed in docs/architecture.md. This test reads every module
with `ast` (nothing is imported) and fails on:

* an import that points up a layer, in any of its four forms: at module
  top, inside a function, under ``TYPE_CHECKING``, or by string (a dotted
  ``trinity_dbapi.…`` name handed to ``importlib`` or a registry; an
  entry-point group setup.cfg declares names no module);
* a module that sits in no layer;
* a hand-written module over 650 lines.
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


#: Names of the storage backends' own classes and attributes: only storage/
#: may use them; every other layer asks the ``Storage`` interface
#: (``local_root``, ``fsspec_filesystem()``) instead of testing what it is.
STORAGE_INTERNALS = ("LocalStorage", "FsspecStorage", "root_dir")


def storage_internals_used(package: Path = PACKAGE) -> list[str]:
    """Every name or attribute of a storage backend used outside storage/."""
    found = []
    for path in modules(package):
        if path.relative_to(package).parts[0] == "storage":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Name):
                names = [node.id]
            elif isinstance(node, ast.Attribute):
                names = [node.attr]
            elif isinstance(node, ast.ImportFrom):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value]
            for name in names:
                if name in STORAGE_INTERNALS:
                    rel = path.relative_to(package.parent)
                    found.append(f"{rel}:{node.lineno} uses {name}")
    return found


def test_no_module_outside_storage_tests_a_storage_class() -> None:
    assert storage_internals_used() == []


def test_storage_internals_are_seen(tmp_path: Path) -> None:
    """The checker itself: a class test, a getattr by string, an attribute."""
    package = tmp_path / "trinity_dbapi"
    (package / "tables").mkdir(parents=True)
    (package / "storage").mkdir()
    (package / "storage" / "local.py").write_text("class LocalStorage: root_dir = ''\n")
    (package / "tables" / "probe.py").write_text(
        "from trinity_dbapi.storage.local import LocalStorage\n"
        "def f(s):\n"
        "    return isinstance(s, LocalStorage), getattr(s, 'root_dir', None), s.root_dir\n",
        encoding="utf-8",
    )
    used = storage_internals_used(package)
    assert len(used) == 4 and all("tables/probe.py" in line for line in used)


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


#: The one module that quotes names and strings for SQL text.
SQL_QUOTING = "format/sql_text.py"
#: Modules that double a quote for something other than SQL, and why.
NOT_SQL_QUOTING = {"cli/formats.py": "an RFC 4180 CSV field"}
_QUOTE_DOUBLINGS = {('"', '""'), ("'", "''")}


def quote_doublings(path: Path) -> list[int]:
    """Lines of ``path`` that call ``.replace('"', '""')`` or ``.replace("'", "''")``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "replace"
        and len(node.args) == 2
        and tuple(getattr(arg, "value", None) for arg in node.args) in _QUOTE_DOUBLINGS
    ]


def test_sql_is_quoted_in_one_place() -> None:
    """Every SQL identifier and string literal is quoted by ``format/sql_text.py``."""
    found = [
        f"{p.relative_to(PACKAGE)}:{line}"
        for p in modules()
        if str(p.relative_to(PACKAGE)) not in {SQL_QUOTING, *NOT_SQL_QUOTING}
        for line in quote_doublings(p)
    ]
    assert found == []


def test_the_quoting_check_sees_either_quote(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "a = name.replace('\"', '\"\"')\nb = text.replace(\"'\", \"''\")\nc = s.replace('a', 'b')\n",
        encoding="utf-8",
    )
    assert quote_doublings(probe) == [1, 2]


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
