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
