"""Compile + YAML of 1,000 varied specs against `json.dumps` of the same output (issue 25
item 4; not a timed test): `python tests/bench/bench_yaml.py`. Ratios of best-of-3 times
measured in one run: compile alone, YAML alone, compile + YAML, and for comparison YAML through
PyYAML's stock `safe_dump_all`, with libyaml and without. The issue's goal is compile + YAML
<= 3.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import yaml

from gkeml_sdk.core.manifests import dump_yaml
from tests.bench.bench_core import varied_jobs
from tests.bench.scale_rows import ScaleRow

GOAL = 3.0


def best(fn: Callable[[], object], runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def ratios() -> dict[str, float]:
    """Best-of-3 times of compile, YAML and both, over `json.dumps` of the same output."""
    jobs = varied_jobs(1000)
    payload = [job.compile().objects for job in jobs]
    floor = best(lambda: [json.dumps(p) for p in payload])
    compile_s = best(lambda: [job.compile() for job in jobs])
    yaml_s = best(lambda: [dump_yaml(p) for p in payload])
    both = best(lambda: [job.compile().to_yaml() for job in jobs])
    libyaml = best(
        lambda: [yaml.dump_all(p, Dumper=yaml.CSafeDumper, sort_keys=False) for p in payload]
    )
    pure = best(lambda: [yaml.safe_dump_all(p, sort_keys=False) for p in payload], runs=1)
    return {"compile": compile_s / floor, "yaml": yaml_s / floor, "both": both / floor,
            "libyaml": libyaml / floor, "pure": pure / floor}  # fmt: skip


def rows() -> list[ScaleRow]:
    """The YAML row of the scale table."""
    both = ratios()["both"]
    return [ScaleRow("compile + YAML of 1,000 specs / json.dumps", f"{both:.2f}", "at most 3",
                     both <= GOAL)]  # fmt: skip


def main() -> None:
    found = ratios()
    print(f"compile / json.dumps            = {found['compile']:6.2f}")
    print(f"YAML / json.dumps                = {found['yaml']:6.2f}")
    print(f"compile + YAML / json.dumps      = {found['both']:6.2f} (goal {GOAL:g})")
    print(f"stock CSafeDumper / json.dumps   = {found['libyaml']:6.2f}")
    print(f"stock SafeDumper / json.dumps    = {found['pure']:6.2f}")


if __name__ == "__main__":
    main()
