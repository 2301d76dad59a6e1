"""The quickstart notebook's pictures in a real browser: executed through a kernel, exported
by nbconvert, opened in headless Chromium; each picture must render with a size, its
labels and ink in its screenshot. CI installs Chromium (.ci/run); elsewhere the test is
skipped without it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests import notebook_browser as nb

pytestmark = pytest.mark.skipif(
    nb.chromium() is None and not os.environ.get("CI"),
    reason="chromium is not installed (apt-get install -y chromium); CI installs it",
)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    work = tmp_path_factory.mktemp("notebook")
    env = {"GKEML_RUN_DIR": str(work / "runs"), "KUBECONFIG": str(work / "no-kubeconfig")}
    return nb.notebook_html(env)


def test_every_picture_renders_with_size_labels_and_ink(page: str, tmp_path: Path) -> None:
    assert nb.check(page, tmp_path, tmp_path) == []
    assert sorted(p.name for p in tmp_path.glob("notebook-*.png")) == sorted(
        f"notebook-{kind}.png" for kind in nb.PICTURES
    )


def test_a_missing_or_empty_picture_fails_the_check(page: str, tmp_path: Path) -> None:
    broken = re.sub(r'data-picture="runs-table"', 'data-gone="runs-table"', page)
    memory = broken.index('data-picture="gpu-memory"')
    head, tail = broken[:memory], broken[memory:]
    tag, rest = tail.split(">", 1)
    tag = re.sub(r'(width|height)="\d+"', r'\1="0"', tag)
    tail = tag + ">" + re.sub(r"<rect [^>]*>", "", rest)  # and nothing drawn in it
    found = nb.check(head + tail, tmp_path, tmp_path)
    assert "runs-table: not on the page" in found
    assert any(p.startswith("gpu-memory (") and p.endswith(": 0x0") for p in found), found


@pytest.mark.parametrize("width", nb.WIDTHS)
def test_the_quickstart_fits_the_page(page: str, tmp_path: Path, width: int) -> None:
    assert nb.overflow(page, tmp_path, width) == []


@pytest.fixture(scope="module")
def every_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    return nb.every_output(tmp_path_factory.mktemp("runs"))


def test_every_html_output_is_on_the_page(every_output: dict[str, object]) -> None:
    import inspect

    import gkeml_magics.display
    import gkeml_magics.explain_view
    import gkeml_sdk

    drawn = {
        cls
        for module in (gkeml_sdk, gkeml_magics.display, gkeml_magics.explain_view)
        for name in getattr(module, "__all__", dir(module))
        if inspect.isclass(cls := getattr(module, name)) and "_repr_html_" in vars(cls)
    }
    shown = {cls for obj in every_output.values() for cls in type(obj).__mro__}
    assert sorted(c.__name__ for c in drawn - shown) == []


@pytest.mark.parametrize("width", nb.WIDTHS)
def test_every_html_output_fits_the_page(
    every_output: dict[str, object], tmp_path: Path, width: int
) -> None:
    assert nb.overflow(nb.outputs_page(every_output), tmp_path, width) == []


def test_a_long_word_or_a_label_off_its_value_fails_the_check(tmp_path: Path) -> None:
    word = "--member=principal://" + "x" * 200
    table = "<table><tr><th>a label</th><td>" + "words " * 200 + "</td></tr></table>"
    page = f"<html><head></head><body><ul><li>{word}</li></ul>{table}</body></html>"
    found = nb.overflow(page, tmp_path, 800)
    assert any(f.startswith("800 px: li text ") for f in found), found
    assert any(f.startswith("800 px: th not beside its value: a label") for f in found), found


def test_each_output_says_where_its_prices_come_from_once(every_output: dict[str, object]) -> None:
    from gkeml_sdk import PriceBook

    book = PriceBook.default()
    for kind in ("CostEstimate", "CostView", "DryRun", "ServeModel", "ServePlan"):
        page = every_output[kind]._repr_html_()  # type: ignore[attr-defined]
        words = [t for t in re.findall(r">([^<]+)<", page) if "accelerator component" in t]
        # One footnote: what the prices cover, their source and their date, together.
        assert len(words) == 1 and book.source in words[0] and book.as_of in words[0], words
