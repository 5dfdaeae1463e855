"""What the package imports is what setup.cfg declares, so a fresh install runs.

Read from the source with ``ast`` (top-level and function-level imports alike)
and mapped to distributions with ``importlib.metadata``: a core module may
import only ``install_requires``; an integration module also its own extra;
an import guarded by ``except ImportError`` may name any extra's package (the
demo skips a step without it), or a module that only some versions of a
declared package have (``sql/compat.py`` finds where sqlglot keeps a class). Upper pins must say which incompatibility they
avoid.
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "trinity_dbapi"

#: Modules (paths under trinity_dbapi/, a trailing / for a folder) that may
#: also import an extra's packages: the integration is that extra's reason.
EXTRA_OF_MODULE = {
    "sqlalchemy/": "sqlalchemy",
    "spark/": "spark",
    "storage/s3.py": "s3",
    "storage/gcs.py": "gcs",
    "storage/azure.py": "azure",
    "storage/botocore_models.py": "s3",
    # The Superset spec reflects through the dialect: docs/superset.md installs it.
    "superset/": "sqlalchemy",
}

#: Imports of the application that loads us, never a dependency of ours:
#: Superset imports the engine spec, not the other way round (a trailing / for a folder).
HOST_IMPORTS = {"superset/": {"superset"}}


def _setup() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def _requirements(text: str) -> set[str]:
    return {canonicalize_name(Requirement(line).name) for line in text.split("\n") if line.strip()}


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    config = _setup()
    core = _requirements(config["options"]["install_requires"])
    extras = {name: _requirements(text) for name, text in config["options.extras_require"].items()}
    return core, extras


def _body_lines(body: list[ast.stmt]) -> set[int]:
    return {n.lineno for stmt in body for n in ast.walk(stmt) if hasattr(n, "lineno")}


def _guarded(tree: ast.AST) -> set[int]:
    """Line numbers of imports inside ``try`` blocks that catch ImportError."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = {
            name.id
            for handler in node.handlers
            if handler.type is not None
            for name in ast.walk(handler.type)
            if isinstance(name, ast.Name)
        }
        if caught & {"ImportError", "ModuleNotFoundError"}:
            lines |= _body_lines(node.body)
    return lines


def _type_checking(tree: ast.AST) -> set[int]:
    """Line numbers under ``if TYPE_CHECKING:`` (never imported at run time)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines |= _body_lines(node.body)
    return lines


def _imports(path: Path) -> Iterator[tuple[str, int, bool]]:
    """(top-level module, line, guarded) of each third-party import of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded, typing_only = _guarded(tree), _type_checking(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if node.lineno in typing_only:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top == "trinity_dbapi":
                continue
            yield top, node.lineno, node.lineno in guarded


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if not p.name.endswith("_pb2.py"))


def _extra_for(relative: str) -> str | None:
    return next((x for prefix, x in EXTRA_OF_MODULE.items() if relative.startswith(prefix)), None)


def test_every_import_is_declared() -> None:
    core, extras = _declared()
    every_extra = set().union(*extras.values())
    distributions = packages_distributions()
    undeclared = []
    for path in _modules():
        relative = path.relative_to(PACKAGE).as_posix()
        extra = _extra_for(relative)
        allowed = core | (extras[extra] if extra else set())
        for top, line, guarded in _imports(path):
            hosts = (h for prefix, h in HOST_IMPORTS.items() if relative.startswith(prefix))
            if top in set().union(*hosts):
                continue
            names = {canonicalize_name(d) for d in distributions.get(top, [top])}
            if names & (allowed | every_extra if guarded else allowed):
                continue
            where = f"extra [{extra}] or install_requires" if extra else "install_requires"
            undeclared.append(
                f"{relative}:{line} imports {top} ({', '.join(names)}): not in {where}"
            )
    assert not undeclared, "\n".join(undeclared)


def test_the_import_scan_sees_numpy_in_the_fetch_conversion() -> None:
    # The bug this file exists for: NumPy used through pyarrow, declared nowhere.
    found = {top for top, _, _ in _imports(PACKAGE / "dbapi" / "pyvalues.py")}
    assert "numpy" in found
    assert "numpy" in _declared()[0]


def test_extras_name_only_packages_of_their_integration() -> None:
    _, extras = _declared()
    assert set(EXTRA_OF_MODULE.values()) <= set(extras)
    # "all" is every runtime extra together, so a user can install everything at once.
    runtime = {"s3", "gcs", "azure", "duckdb", "sqlalchemy", "pandas", "spark"}
    assert set().union(*(extras[name] for name in runtime)) <= extras["all"]


def _requirement_lines() -> Iterator[tuple[str, str, list[str]]]:
    """(section/key, requirement, the comment lines right above it) from setup.cfg's text."""
    key = ""
    comments: list[str] = []
    for raw in (ROOT / "setup.cfg").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not raw.startswith((" ", "\t")):
            key = line.split("=")[0].strip()
            comments = []
        elif line.startswith("#"):
            comments.append(line)
        elif line:
            yield key, line, comments
            comments = []


@pytest.mark.parametrize("where", ["install_requires", "test", "all"])
def test_requirement_scan_reads_the_sections(where: str) -> None:
    assert any(key == where for key, _, _ in _requirement_lines())


def test_every_upper_pin_says_why() -> None:
    unexplained = [
        f"{key}: {line}"
        for key, line, comments in _requirement_lines()
        if re.search(r"<|~=|==", line) and not comments
    ]
    assert not unexplained, "upper pins need a comment naming the incompatibility: " + str(
        unexplained
    )


# -- Apache Superset 6.1 installs beside us ------------------------------------------------

#: Superset 6.1.0's own requirements (its wheel's Requires-Dist lines, extras left out).
SUPERSET_REQUIRES = ROOT / "tests" / "fixtures" / "superset-6.1.0-requires.txt"
#: What ``pip install apache-superset==6.1.0 "trinity-dbapi[sqlalchemy,pandas]"``
#: resolves to for the packages both require (Python 3.11): each must satisfy
#: Superset's pin and every one of ours. pandas 2.1.4 itself needs NumPy < 2.
SUPERSET_ENVIRONMENT = {
    "msgpack": "1.0.8",
    "numpy": "1.26.4",
    "pandas": "2.1.4",
    "pyarrow": "18.1.0",
    "sqlalchemy": "1.4.54",
    "sqlglot": "28.10.1",
}
#: Our extras a Superset user installs.
SUPERSET_EXTRAS = ("sqlalchemy", "pandas")


def _superset_requirements() -> dict[str, Requirement]:
    requirements = {}
    for line in SUPERSET_REQUIRES.read_text(encoding="utf-8").splitlines():
        if line.startswith("Requires-Dist:"):
            requirement = Requirement(line.removeprefix("Requires-Dist:").strip())
            requirements[canonicalize_name(requirement.name)] = requirement
    return requirements


def _our_requirements() -> list[Requirement]:
    config = _setup()
    texts = [config["options"]["install_requires"]]
    texts += [config["options.extras_require"][extra] for extra in SUPERSET_EXTRAS]
    return [
        Requirement(line.strip())
        for text in texts
        for line in text.split("\n")
        if line.strip() and not line.strip().startswith("#")
    ]


def test_superset_fixture_reads() -> None:
    superset = _superset_requirements()
    assert len(superset) > 50
    assert str(superset["sqlalchemy"].specifier) == "<2,>=1.4"


def test_every_package_shared_with_superset_has_a_resolved_version() -> None:
    shared = {canonicalize_name(r.name) for r in _our_requirements()} & set(
        _superset_requirements()
    )
    assert shared == set(SUPERSET_ENVIRONMENT)


@pytest.mark.parametrize(("name", "version"), sorted(SUPERSET_ENVIRONMENT.items()))
def test_our_ranges_admit_superset_6_1(name: str, version: str) -> None:
    assert _superset_requirements()[name].specifier.contains(version)
    ours = [r for r in _our_requirements() if canonicalize_name(r.name) == name]
    assert ours
    refusing = [str(r) for r in ours if not r.specifier.contains(version)]
    assert not refusing, f"{name} {version} (Superset 6.1's) is refused by {refusing}"
