"""Each field of the public models carries its one-line meaning as its `description`, and the
API reference (mkdocs with the Griffe extension in docs/griffe_fields.py) and `help()` show it
with the field's type and default."""

from __future__ import annotations

import html
import inspect
import pydoc
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

import gkeml_sdk

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs"))
from griffe_fields import fields_of  # noqa: E402

REQUIRED = ("TrainingJob", "ServeModel", "Tenant", "NodePool", "ClusterSetup")
MODELS = tuple(
    name
    for name in gkeml_sdk.__all__
    if isinstance(model := getattr(gkeml_sdk, name), type) and issubclass(model, BaseModel)
)


def _reachable_models() -> list[type[BaseModel]]:
    """The public models and every model nested in their fields, however deep."""
    found: list[type[BaseModel]] = []
    todo: list[object] = [getattr(gkeml_sdk, name) for name in MODELS]
    while todo:
        kind = todo.pop()
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if kind not in found:
                found.append(kind)
                todo.extend(info.annotation for info in kind.model_fields.values())
        else:
            todo.extend(typing.get_args(kind))
    return found


REACHABLE = _reachable_models()


@pytest.fixture(scope="module")
def api_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    site = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT, check=True, capture_output=True,
    )  # fmt: skip
    # One page per public name: read together, each name's section is found by its id.
    pages = sorted((site / "reference").glob("*/index.html"))
    return "".join(page.read_text() for page in pages if page.parent.name != "api")


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


def test_the_required_models_are_public_models() -> None:
    assert set(REQUIRED) <= set(MODELS) and len(MODELS) > 20
    assert len(REACHABLE) > len(MODELS)  # the nested ones (TenantModel's ServeModel, ...)


@pytest.mark.parametrize("model", REACHABLE, ids=lambda model: model.__name__)
def test_every_field_says_what_it_means(model: type[BaseModel]) -> None:
    text = " ".join(pydoc.render_doc(model, renderer=pydoc.plaintext).replace(" |", "").split())
    for field, info in model.model_fields.items():
        meaning = (info.description or "").strip()
        assert meaning, f"{model.__name__}.{field} has no description"
        assert "\n" not in meaning, f"{model.__name__}.{field}: one line, one meaning"
        assert " ".join(f"{field}: {meaning}".split()) in text, f"help() omits {field}"


@pytest.mark.parametrize("name", MODELS)
def test_the_reference_lists_every_field(api_page: str, name: str) -> None:
    model = getattr(gkeml_sdk, name)
    rows = _fields_table(api_page, name)
    assert [row[0] for row in rows] == list(model.model_fields)
    for field, kind, meaning, default in rows:
        info = model.model_fields[field]
        assert kind and meaning, f"{name}.{field} has no type or meaning"
        # The description as markdown renders it: the same words, code spans and all.
        assert re.findall(r"\w+", meaning) == re.findall(r"\w+", info.description or "")
        value = None if info.is_required() else info.get_default(call_default_factory=True)
        assert default == ("required" if value is None and info.is_required() else repr(value))


@pytest.mark.parametrize("name", MODELS)
def test_help_shows_the_same_fields(name: str) -> None:
    model = getattr(gkeml_sdk, name)
    text = pydoc.render_doc(model, renderer=pydoc.plaintext)
    flat = " ".join(text.replace(" |", "").split())
    # pydantic's signature, on help()'s second line: each field's type and default.
    shown = next(line for line in text.splitlines() if line.startswith(f" |  {name}("))
    signature = inspect.signature(model)
    for field, meaning, default in fields_of(model):
        assert meaning, f"{name}.{field} has no description"
        assert " ".join(f"{field}: {meaning}".split()) in flat
        assert re.search(rf"[(, ]{field}: ", shown), shown
        parameter = signature.parameters[field]
        assert parameter.annotation is not inspect.Parameter.empty
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:  # not a positional shortcut
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
