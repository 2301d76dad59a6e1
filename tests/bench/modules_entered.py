"""How far one compile travels: the gkeml modules one `TrainingJob(...).compile().to_yaml()`
enters, how often a call crosses from one top-level folder to another, and how often the
repeated look-ups run. Counts, not times, so they are the same on any machine.

    python tests/bench/modules_entered.py
"""

from __future__ import annotations

import collections
import sys
from types import FrameType
from typing import Any

from gkeml_sdk import Accelerator, TrainingJob

# README's job.
JOB = TrainingJob(
    name="llama-ft",
    image="us-docker.pkg.dev/p/r/trainer:1",
    command=["python", "train.py"],
    accelerator=Accelerator("h100", count=8),
    nodes=2,
    gang=True,
    spot=True,
    queue="team-a",
    max_restarts=3,
)
# The repeated look-ups: the network stack chosen for the job, and the GPU row of its name.
LOOK_UPS = ("gkeml_sdk.hardware.network.choose_network", "gkeml_sdk.hardware.gpus.gpu")


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else parts[-1]


def measure() -> tuple[list[str], int, collections.Counter[str]]:
    """The modules entered, the folder crossings and the calls per function name."""
    entered: set[str] = set()
    calls: collections.Counter[str] = collections.Counter()
    crossings = 0
    last: str | None = None

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal crossings, last
        module = frame.f_globals.get("__name__", "")
        if event != "call" or not module.startswith("gkeml_sdk"):
            return
        entered.add(module)
        calls[f"{module}.{frame.f_code.co_qualname}"] += 1
        folder = _folder(module)
        crossings += last is not None and folder != last
        last = folder

    sys.setprofile(profile)
    try:
        JOB.compile().to_yaml()
    finally:
        sys.setprofile(None)
    return sorted(entered), crossings, calls


if __name__ == "__main__":
    modules, crossings, calls = measure()
    by_folder = collections.Counter(_folder(m) for m in modules)
    print(f"{len(modules)} modules entered, {crossings} calls cross between top-level folders")
    print("by folder:", ", ".join(f"{f} {n}" for f, n in by_folder.most_common()))
    print("look-ups:", ", ".join(f"{name.rpartition('.')[2]} x{calls[name]}" for name in LOOK_UPS))
