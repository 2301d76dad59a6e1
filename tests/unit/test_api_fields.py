"""The API reference lists every field of the public models with its type, default and
one-line meaning, and `help()` shows the same fields: rendered by mkdocs with the Griffe
extension in docs/griffe_fields.py, from the models' `Attributes:` docstring sections."""

from __future__ import annotations

import html
import inspect
import pydoc
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

import gkeml_sdk

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))
from griffe_fields import fields_of  # noqa: E402

REQUIRED = ("TrainingJob", "ServeModel", "Tenant", "NodePool", "ClusterSetup")


@pytest.fixture(scope="module")
def api_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    site = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    return (site / "reference" / "api" / "index.html").read_text()


def _fields_table(page: str, name: str) -> list[tuple[str, str, str, str]]:
    """(name, type, meaning, default) rows of the Fields table in `name`'s section."""
    start = page.index(f'id="gkeml_sdk.{name}"')
    section = page[start : page.find('class="doc doc-heading"', start + 50)]
    table = section[section.index(">Fields<") :]
    table = table[: table.index("</table>")]
    rows = []
    for row in re.findall(r"<tr class=\"doc-section-item\">(.*?)</tr>", table, flags=re.S):
        cells = [
            html.unescape(re.sub(r"<[^>]+>|\s+", " ", cell)).strip()
            for cell in re.findall(r"<td>(.*?)</td>", row, flags=re.S)
        ]
        rows.append((cells[0], cells[1], cells[2], cells[3]))
    return rows


@pytest.mark.parametrize("name", REQUIRED)
def test_the_reference_lists_every_field(api_page: str, name: str) -> None:
    model = getattr(gkeml_sdk, name)
    rows = _fields_table(api_page, name)
    assert [row[0] for row in rows] == list(model.model_fields)
    for field, kind, meaning, default in rows:
        info = model.model_fields[field]
        assert kind and meaning, f"{name}.{field} has no type or meaning"
        value = None if info.is_required() else info.get_default(call_default_factory=True)
        assert default == ("required" if value is None and info.is_required() else repr(value))


@pytest.mark.parametrize("name", REQUIRED)
def test_help_shows_the_same_fields(name: str) -> None:
    model = getattr(gkeml_sdk, name)
    text = pydoc.render_doc(model, renderer=pydoc.plaintext)
    signature = inspect.signature(model)  # pydantic's: each field's type and default
    assert f" |  {name}{signature}\n" in text
    assert list(signature.parameters) == list(model.model_fields)
    for field, meaning, default in fields_of(model):
        assert meaning, f"{name}.{field} has no meaning in its Attributes: section"
        assert " ".join(f"{field}: {meaning}".split()) in " ".join(text.replace(" |", "").split())
        parameter = signature.parameters[field]
        assert parameter.annotation is not inspect.Parameter.empty
        assert (parameter.default is inspect.Parameter.empty) == (default is None)


def test_fields_tables_only_for_models(api_page: str) -> None:
    public = [getattr(gkeml_sdk, n) for n in gkeml_sdk.__all__ if n != "__version__"]
    models = [o for o in public if isinstance(o, type) and issubclass(o, BaseModel)]
    assert api_page.count(">Fields<") == len(models)


def test_examples_render_as_code(api_page: str) -> None:
    start = api_page.index('id="gkeml_sdk.TrainingJob"')
    section = api_page[start : api_page.find('class="doc doc-heading"', start + 50)]
    assert "<blockquote>" not in section
    assert '<span class="gp">&gt;&gt;&gt; </span><span class="n">job</span>' in section
