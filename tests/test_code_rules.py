"""Rules of the code that are not about imports, each checked with ``ast``.

* only ``storage/`` names a storage backend's own classes and attributes;
* SQL names and strings are quoted in one place, ``format/sql_text.py``;
* no private name (``_name``) is taken from another module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_architecture import PACKAGE, is_module, modules

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


def private_names_used_across(package: Path = PACKAGE) -> list[str]:
    """Every ``_name`` a module takes from another module of the package.

    ``from trinity_dbapi.x import _name`` and ``x._name`` (``x`` a module of
    the package) both count: what a sibling needs is not private, and gets a
    public name in the module that owns it.
    """
    found = []
    for path in modules(package):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(package.parent)
        aliases: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level:
                source = node.module or ""
                if source.split(".")[0] != "trinity_dbapi":
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{rel}:{node.lineno} imports {source}.{alias.name}")
                    if is_module(f"{source}.{alias.name}", package):
                        aliases.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                aliases.update(a.asname or a.name for a in node.names if a.asname)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(f"{rel}:{node.lineno} uses {node.value.id}.{node.attr}")
    return found


def test_no_private_name_crosses_modules() -> None:
    assert private_names_used_across() == []


def test_a_private_name_across_modules_is_seen(tmp_path: Path) -> None:
    package = tmp_path / "trinity_dbapi"
    (package / "cli").mkdir(parents=True)
    for name in ("__init__.py", "cli/__init__.py", "cli/shell.py"):
        (package / name).touch()
    (package / "cli" / "command.py").write_text(
        "from trinity_dbapi.cli import shell\n"
        "from trinity_dbapi.cli.shell import _reader, run\n"
        "shell._history()\n",
        encoding="utf-8",
    )
    assert private_names_used_across(package) == [
        "trinity_dbapi/cli/command.py:2 imports trinity_dbapi.cli.shell._reader",
        "trinity_dbapi/cli/command.py:3 uses shell._history",
    ]
