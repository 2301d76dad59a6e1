"""The API reference documents the public names, each on a page of its own (no module path),
listed once in the index under its topic with its docstring's first sentence, and in the
site's navigation."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import yaml

import gkeml_sdk

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
INDEX = REFERENCE / "api.md"
PUBLIC = sorted(set(gkeml_sdk.__all__) - {"__version__"})


def index_entries() -> list[tuple[str, str, str]]:
    """(name, page, summary) of each line of the index."""
    return re.findall(r"^- \[`(\w+)`\]\((\w+)\.md\): (.*)$", INDEX.read_text(), flags=re.M)


def test_every_public_name_has_a_page_of_its_own() -> None:
    pages = {p.stem: p.read_text() for p in REFERENCE.glob("*.md") if p != INDEX}
    assert sorted(pages) == PUBLIC
    for name, text in pages.items():
        assert re.findall(r"^::: (\S+)$", text, flags=re.M) == [f"gkeml_sdk.{name}"], name


def test_the_index_lists_each_page_once_with_its_first_sentence() -> None:
    entries = index_entries()
    assert [n for n, _, _ in entries] == [p for _, p, _ in entries]
    assert sorted(n for n, _, _ in entries) == PUBLIC  # each once
    for name, _, summary in entries:
        doc = inspect.getdoc(getattr(gkeml_sdk, name)) or ""
        assert summary == " ".join(doc.split("\n\n")[0].split()), name


def test_the_navigation_has_every_page_under_the_index_topics() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    reference = next(group["Reference"] for group in nav if "Reference" in group)
    api = next(item["API reference"] for item in reference if "API reference" in item)
    topics = re.findall(r"^## (.+)$", INDEX.read_text(), flags=re.M)
    assert api[0] == {"Index": "reference/api.md"}
    assert [next(iter(group)) for group in api[1:]] == topics
    listed = [page for group in api[1:] for item in next(iter(group.values()))
              for page in item.values()]  # fmt: skip
    assert listed == [f"reference/{name}.md" for name, _, _ in index_entries()]


def test_the_readme_names_the_extra_that_builds_the_docs() -> None:
    import tomllib

    readme = " ".join((ROOT / "README.md").read_text().split())
    extra = re.search(r"pip install -e '\.\[(\w+)\]' && mkdocs serve", readme)
    assert extra, "README says how to install what `mkdocs serve` needs"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needs = " ".join(project["optional-dependencies"][extra.group(1)])
    # mkdocs.yml's plugins: mkdocstrings with its Python handler (which brings griffe).
    assert "mkdocs>=" in needs and "mkdocstrings[python]" in needs
