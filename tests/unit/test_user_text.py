"""User-facing text stands alone: no string, docstring, doc page or example cites the project's
internal reference notes (files users do not have, or their "§N" sections)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = re.compile(
    r"gke-facts|kueue-api|serving-and-tenancy|admission-rules|anchors\.md|§", re.IGNORECASE
)


def _strings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def internal_citations(path: Path, root: Path = ROOT) -> list[str]:
    """`path:line: text` for every string constant (docstrings included) citing a note."""
    return [
        f"{path.relative_to(root)}:{line}: {text.strip()[:80]!r}"
        for line, text in _strings(path)
        if INTERNAL.search(text)
    ]


@pytest.mark.parametrize("package", ["gkeml_sdk", "gkeml_magics"])
def test_no_string_in_the_code_cites_an_internal_note(package):
    found = [
        hit for path in sorted((ROOT / package).rglob("*.py")) for hit in internal_citations(path)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("folder", ["docs", "examples"])
def test_no_doc_page_or_example_cites_an_internal_note(folder):
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / folder).rglob("*"))
        if path.is_file() and path.suffix in {".md", ".py", ".ipynb", ".yaml", ".yml"}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if INTERNAL.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_check_finds_a_citation_in_a_message_and_a_docstring(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""Doc (gke-facts §4)."""\nMESSAGE = f"see {1} kueue-api.md"\nOK = "fine"\n')
    assert [hit.split(":")[1] for hit in internal_citations(sample, tmp_path)] == ["1", "2"]


def test_default_prices_name_their_public_source_and_date():
    from gkeml_sdk import PriceBook

    book = PriceBook.default()
    assert "github.com/skypilot-org/skypilot-catalog" in book.source
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", book.as_of)
    assert not INTERNAL.search(book.source)


EDGE_WORDS = re.compile(
    r"%%?gke_[a-z]+|\bgkeml (render|validate|submit|status|logs|cancel|runs|serve|catalog)\b"
)


def test_the_library_speaks_python_and_leaves_flags_to_the_edges():
    edges = set((ROOT / "gkeml_sdk" / "cli").rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text.strip()[:80]!r}"
        for path in sorted((ROOT / "gkeml_sdk").rglob("*.py"))
        if path not in edges
        for line, text in _strings(path)
        if EDGE_WORDS.search(text)
    ]
    assert not found, "\n".join(found)
