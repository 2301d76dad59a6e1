"""docs/notebooks.md, docs/environment.md and docs/images cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

from gkeml_magics.reference import updated_page
from gkeml_sdk import TpuSlice, TrainingJob
from gkeml_sdk.backends.local.plan.local_environment import (
    TORCHRUN_LOCAL_RANK,
    TORCHRUN_LOCAL_WORLD_SIZE,
    TORCHRUN_RANK,
)
from gkeml_sdk.core import environment as contract
from gkeml_sdk.training.pod import pod_template

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_magics_reference_matches_the_parsers() -> None:
    page = (DOCS / "notebooks.md").read_text()
    assert page == updated_page(page), (
        "docs/notebooks.md is out of date: run python -m gkeml_magics.reference docs/notebooks.md"
    )


def test_every_contract_variable_is_documented() -> None:
    page = (DOCS / "environment.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)` \|", page, flags=re.MULTILINE))
    names = set(contract.RESERVED_ENV)
    for tpu in (TpuSlice("v5e", "4x4"), TpuSlice("v5e", "4x4", slices=2)):
        env = pod_template(TrainingJob(name="t", command=["x"], accelerator=tpu))["spec"]
        names |= {e["name"] for e in env["containers"][0]["env"]}
    missing = names - documented
    assert not missing, f"document in docs/environment.md: {sorted(missing)}"
    for local_only in (TORCHRUN_RANK, TORCHRUN_LOCAL_RANK, TORCHRUN_LOCAL_WORLD_SIZE):
        assert f"`{local_only}`" in page


def test_every_image_of_the_docs_is_a_screenshot_the_script_takes_again() -> None:
    from tests.notebook_browser import PICTURES

    images = {path.name for path in (DOCS / "images").iterdir()}
    assert images == {f"notebook-{kind}.png" for kind in PICTURES}, (
        "docs/images holds only what python -m tests.notebook_browser docs/images writes"
    )
    for page in (DOCS / "first-hour.md", DOCS.parent / "README.md"):
        assert "python -m tests.notebook_browser docs/images" in page.read_text(), page
