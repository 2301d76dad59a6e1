"""docs/networking.md and docs/dra.md show what the compiler really emits for their specs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from gkeml_sdk import Accelerator, TrainingJob

DOCS = Path(__file__).resolve().parents[2] / "docs"


def blocks(page: str) -> list[Any]:
    text = (DOCS / page).read_text()
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S)]


def contains(whole: Any, part: Any) -> bool:
    """True when `part` is `whole` with some dict keys left out."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(
            k in whole and contains(whole[k], v) for k, v in part.items()
        )
    if isinstance(part, list):
        if not isinstance(whole, list):
            return False
        return all(any(contains(w, p) for w in whole) for p in part)
    return bool(whole == part)


def test_networking_page_fragment_is_compiled_output() -> None:
    job = TrainingJob(
        name="mega", image="img", command=["python", "train.py"],
        accelerator=Accelerator("h100-mega", count=8), nodes=2,
    )  # fmt: skip
    template = job.compile().main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    (fragment,) = blocks("networking.md")
    assert contains(template, fragment)


def test_dra_page_fragments_are_compiled_output() -> None:
    job = TrainingJob(
        name="ft", image="img", command=["python", "train.py"],
        accelerator=Accelerator("h100", count=8, allocation="dra"),
    )  # fmt: skip
    m = job.compile()
    claim_template, pod = blocks("dra.md")
    assert contains(m.objects[0], claim_template)
    assert contains(m.main["spec"]["template"], pod)
