"""The documentation's examples run as written (with a temporary folder)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL)


def test_transactions_page_first_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = _blocks(DOCS / "docs" / "transactions.md")[0]
    exec(block.replace("/tmp/tx-demo", str(tmp_path / "lake")), {})  # noqa: S102
    assert capsys.readouterr().out.strip() == "['sales'] ['orders']"


#: ``<!-- needs: module.attribute ... -->`` right before a block: the block runs
#: only where each exists (SQLAlchemy 2's ``sqlalchemy.orm.DeclarativeBase``,
#: pandas 3's ``pandas.DataFrame.from_arrow``, an optional package).
_NEEDS = re.compile(r"<!-- needs: ([\w. ]+) -->\n$")


def _needs_met(text: str, start: int) -> bool:
    """Whether what the marker before the block at ``start`` names exists here."""
    found = _NEEDS.search(text, 0, start)
    if found is None or found.end() != start:
        return True
    return all(_exists(dotted) for dotted in found.group(1).split())


def _exists(dotted: str) -> bool:
    """Whether ``module.attribute`` (any depth of either) imports and resolves here."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def test_needs_marker() -> None:
    text = "a\n<!-- needs: os.path.join -->\n```python\n"
    assert _needs_met(text, text.index("```"))
    text = "a\n<!-- needs: os.path.no_such_thing -->\n```python\n"
    assert not _needs_met(text, text.index("```"))
    text = "a\n<!-- needs: no_such_module.x -->\n```python\n"
    assert not _needs_met(text, text.index("```"))
    text = "a\n<!-- needs: os.sep no_such_module -->\n```python\n"
    assert not _needs_met(text, text.index("```"))
    assert _needs_met("a\n```python\n", 2)


# -- docs/dbapi.md ------------------------------------------------------------------

DBAPI_PAGE = DOCS / "docs" / "dbapi.md"
#: A python block, and the text block right after it: what the block prints.
_EXAMPLE = re.compile(r"```python\n(.*?)```(?:\n\n```text\n(.*?)```)?", re.DOTALL)
#: A level-3 heading holding a catalog table or procedure name, and the section under it.
_SECTION = re.compile(r"^### `([a-z_]+\.[a-z_]+)[^`]*`\n(.*?)(?=^##|\Z)", re.DOTALL | re.MULTILINE)


def _run_examples(text: str, folder: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Run every python block in order, in one scope; check each one's printed output.

    A block whose ``<!-- needs: ... -->`` marker names what is not installed
    here is left out, and so is its output.
    """
    scope: dict[str, object] = {}
    outputs = []
    for match in _EXAMPLE.finditer(text):
        code, expected = match.groups()
        if not _needs_met(text, match.start()):
            continue
        exec(code.replace("/tmp/dbapi-demo", str(folder)), scope)  # noqa: S102
        printed = capsys.readouterr().out
        if expected is not None:
            assert printed == expected, f"the example starting {code.splitlines()[0]!r}"
        outputs.append(printed)
    return outputs


def test_dbapi_page_examples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The object store examples have their own tests, on the emulators.
    for variable in ("LAKE_S3_BUCKET", "LAKE_GCS_BUCKET", "LAKE_AZURE_CONTAINER"):
        monkeypatch.delenv(variable, raising=False)
    text = DBAPI_PAGE.read_text()
    outputs = _run_examples(text, tmp_path, capsys)
    assert len(outputs) >= 20
    # Every text block but the exception tree is the checked output of an example.
    checked = sum(1 for match in _EXAMPLE.finditer(text) if match.group(2) is not None)
    assert checked == text.count("```text\n") - 1

    import trinity_dbapi

    # The last example rolled back to the export (oncall is back), then compacted.
    with trinity_dbapi.connect(str(tmp_path / "lake"), create=False, read_only=True) as conn:
        names = conn.execute("SELECT namespace_name FROM system.namespaces").fetchall()
        assert sorted(names) == [("archive",), ("oncall",), ("ops",), ("sales",)]
        assert conn.execute("SELECT max(version) FROM system.versions").fetchone() == (24,)


def test_recovery_page_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (DOCS / "docs" / "recovery.md").read_text().replace("/tmp/recovery-demo", str(tmp_path))
    outputs = _run_examples(text, tmp_path, capsys)
    assert len(outputs) == 3
    assert outputs[-1].splitlines()[-1] == "4 [(2,)]"


@pytest.mark.s3
def test_dbapi_page_s3_example(
    moto_server: str, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import trinity_dbapi

    blocks = _blocks(DBAPI_PAGE)
    (s3_block,) = [block for block in blocks if "s3://" in block]
    monkeypatch.setenv("LAKE_S3_BUCKET", s3_bucket)
    monkeypatch.setenv("LAKE_S3_ENDPOINT", moto_server)
    exec("import trinity_dbapi\n" + s3_block, {})  # noqa: S102

    from tests.conftest import s3_options

    uri = f"s3://{s3_bucket}/lake"
    with trinity_dbapi.connect(uri, storage_options=s3_options(moto_server), create=False) as conn:
        assert ("sales",) in conn.execute("SHOW NAMESPACES").fetchall()


def _run_store_example(marker: str, uri: str, options: dict[str, object]) -> None:
    """Run the page's one example that names ``marker`` (its environment set), then check it."""
    import trinity_dbapi

    (block,) = [block for block in _blocks(DBAPI_PAGE) if marker in block]
    exec("import os\nimport trinity_dbapi\n" + block, {})  # noqa: S102
    with trinity_dbapi.connect(uri, storage_options=options, create=False) as conn:
        assert ("sales",) in conn.execute("SHOW NAMESPACES").fetchall()


@pytest.mark.gcs
def test_dbapi_page_gcs_example(gcs_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import emulators

    bucket = emulators.create_gcs_bucket(gcs_server)
    monkeypatch.setenv("LAKE_GCS_BUCKET", bucket)
    monkeypatch.setenv("LAKE_GCS_TOKEN", "anon")
    monkeypatch.setenv("LAKE_GCS_ENDPOINT", gcs_server)
    _run_store_example("gs://", f"gs://{bucket}/lake", emulators.gcs_options(gcs_server))


@pytest.mark.azure
def test_dbapi_page_azure_example(azure_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import emulators

    container = emulators.create_azure_container(azure_server)
    options = emulators.azure_options(azure_server)
    monkeypatch.setenv("LAKE_AZURE_CONTAINER", container)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", str(options["connection_string"]))
    _run_store_example("abfs://", f"abfs://{container}/lake", options)


def _error_tree() -> list[str]:
    """The exception hierarchy of trinity_dbapi.errors, drawn as the page draws it."""
    from trinity_dbapi import errors

    classes = [
        cls
        for name, cls in vars(errors).items()
        if isinstance(cls, type) and cls.__module__ == errors.__name__ and cls.__name__ == name
    ]
    lines: list[str] = []

    def draw(cls: type, prefix: str, last: bool, top: bool) -> None:
        lines.append(cls.__name__ if top else f"{prefix}{'└── ' if last else '├── '}{cls.__name__}")
        children = [c for c in classes if c.__bases__[0] is cls]
        inner = "" if top else prefix + ("    " if last else "│   ")
        for i, child in enumerate(children):
            draw(child, inner, i == len(children) - 1, False)

    for root in (c for c in classes if c.__bases__[0] is Exception):
        draw(root, "", True, True)
    return lines


def test_dbapi_page_error_tree_matches_errors_module() -> None:
    text = DBAPI_PAGE.read_text()
    tree = re.search(r"```text\n(Warning\nError\n.*?)```", text, re.DOTALL)
    assert tree is not None
    assert tree.group(1).splitlines() == _error_tree()


def _documented_columns(section: str) -> list[tuple[str, ...]]:
    """The rows of the first table of a section: its backquoted cells, and yes/no cells."""
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| `"):
            rows.append(
                tuple(c.strip("`") for c in cells if c.startswith("`") or c in ("yes", "no"))
            )
        elif rows:
            break
    return rows


def test_dbapi_page_documents_every_catalog_column() -> None:
    import trinity_dbapi
    from trinity_dbapi.lakehouse.catalog import CATALOG_TABLES

    sections = dict(_SECTION.findall(DBAPI_PAGE.read_text()))
    cur = trinity_dbapi.connect(f"memory://test-docs-{uuid.uuid4().hex}", autocommit=True).cursor()
    for namespace, name in CATALOG_TABLES:
        rows = cur.execute(f"DESCRIBE {namespace}.{name}").fetchall()
        described = [(col, kind, "yes" if null else "no") for col, kind, null, *_ in rows]
        documented = [row[:3] for row in _documented_columns(sections[f"{namespace}.{name}"])]
        assert documented == described, f"{namespace}.{name}"


def test_dbapi_page_documents_every_procedure_result() -> None:
    import trinity_dbapi
    from trinity_dbapi.format.type_mapping import columns_from_schema
    from trinity_dbapi.sql.engine.procedures import PROCEDURES

    calls = {
        "rollback_to_version": "CALL system.rollback_to_version(0)",
        "export_snapshot": "CALL system.export_snapshot('docs')",
        "expire_versions": "CALL system.expire_versions(dry_run => TRUE)",
        "compact": "CALL system.compact()",
        "collect_garbage": "CALL system.collect_garbage(dry_run => TRUE)",
        "check_integrity": "CALL system.check_integrity()",
        "sync_kartothek": "CALL system.sync_kartothek()",
        # A lakehouse root is a Kartothek store: the table src imports itself.
        "import_kartothek": "CALL system.import_kartothek('copy_of_src', ?, ?)",
        "rewrite_data_files": "CALL system.rewrite_data_files('copy_of_src')",
    }
    assert set(calls) == set(PROCEDURES)
    sections = dict(_SECTION.findall(DBAPI_PAGE.read_text()))
    root = f"memory://test-docs-{uuid.uuid4().hex}"
    cur = trinity_dbapi.connect(root, autocommit=True).cursor()
    cur.execute("CREATE TABLE src (x INT4)")
    cur.execute(
        "SELECT format_properties['dataset_uuid'] FROM system.tables WHERE table_name = 'src'"
    )
    params = {"import_kartothek": [root, cur.fetchone()[0]]}
    for name, sql in calls.items():
        schema = cur.execute(sql, params.get(name, [])).fetch_arrow_table().schema
        returned = [(c.name, c.type.to_sql()) for c in columns_from_schema(schema)]
        documented = [row[:2] for row in _documented_columns(sections[f"system.{name}"])]
        assert documented == returned, name


def test_datasets_type_table_matches_the_code() -> None:
    from trinity_dbapi.format.type_mapping import arrow_type, duckdb_type
    from trinity_dbapi.sql import statements as st

    text = (DOCS / "docs" / "datasets.md").read_text()
    section = text.split("## Types", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) >= 20
    for row in rows:
        trinity, arrow, _, duck = (cell.strip().strip("`") for cell in row.strip("|").split("|"))
        (parsed,) = st.parse(f"CREATE TABLE t (c {trinity})")
        data_type = st.to_statement(parsed).columns[0].type  # type: ignore[attr-defined]
        assert data_type.to_sql() == trinity
        assert str(arrow_type(data_type)) == arrow, trinity
        assert duckdb_type(data_type) == duck, trinity


# -- docs/sqlalchemy.md -------------------------------------------------------------


def test_sqlalchemy_page_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pandas")
    text = (DOCS / "docs" / "sqlalchemy.md").read_text()
    scope: dict[str, object] = {}
    checked = skipped = 0
    for match in _EXAMPLE.finditer(text):
        code, expected = match.groups()
        if not _needs_met(text, match.start()):
            skipped += 1  # SQLAlchemy 1.4: the page says what to write instead
            continue
        # dont_inherit: this module's `from __future__ import annotations` would
        # turn the ORM example's annotations into strings.
        source = compile(
            code.replace("/tmp/sqla-demo", str(tmp_path)), "docs", "exec", dont_inherit=True
        )
        exec(source, scope)  # noqa: S102
        printed = capsys.readouterr().out
        assert expected is not None, f"the example starting {code.splitlines()[0]!r}"
        assert printed == expected, f"the example starting {code.splitlines()[0]!r}"
        checked += 1
    assert checked + skipped == 9
    assert skipped <= 1


# -- docs/branches.md ---------------------------------------------------------------


def test_branches_page_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The write-audit-publish pipeline runs, and prints what the page says at each step."""
    text = (DOCS / "docs" / "branches.md").read_text().replace("/tmp/branches-demo", str(tmp_path))
    # Every python block has its output under it, and every text block is one.
    blocks = list(_EXAMPLE.finditer(text))
    assert len(blocks) == 6
    assert all(match.group(2) is not None for match in blocks)
    assert text.count("```text\n") == len(blocks)
    _run_examples(text, tmp_path, capsys)

    import trinity_dbapi

    # Merged and then dropped: main holds the audited load, the tag stays.
    with trinity_dbapi.connect(str(tmp_path), read_only=True) as conn:
        refs = conn.execute("SELECT ref_name, ref_type FROM system.refs").fetchall()
        assert refs == [("main", "branch"), ("fix", "branch"), ("before_load", "tag")]
        ids = conn.execute("SELECT id FROM orders ORDER BY id").fetchall()
        assert ids == [(1,), (2,), (3,), (5,)]
