"""The documentation's examples run as written (with a temporary folder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.DOTALL)


def test_readme_python_examples(tmp_path: Path) -> None:
    first, second = _blocks(DOCS / "README.md")[:2]
    scope: dict[str, object] = {}
    exec(first.replace("/tmp/my-lake", str(tmp_path / "lake")), scope)  # noqa: S102
    exec(second, scope)  # noqa: S102
    lake = scope["lake"]
    assert lake.begin().list_namespaces() == ["sales"]  # type: ignore[attr-defined]


def test_transactions_page_first_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    block = _blocks(DOCS / "docs" / "transactions.md")[0]
    exec(block.replace("/tmp/tx-demo", str(tmp_path / "lake")), {})  # noqa: S102
    assert capsys.readouterr().out.strip() == "['sales'] ['orders']"
