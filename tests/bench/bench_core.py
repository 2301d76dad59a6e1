"""Benchmarks of the typed core, reported as ratios measured in one run (not timed tests).

    python tests/bench/bench_core.py

- import: `import gkeml_sdk` vs `import kubernetes`, each in a fresh interpreter (best of N);
  must stay below 0.3 because heavy imports are lazy; also reported: the first use of the
  spec classes (pydantic model classes are built then).
- compile: compiling 1,000 varied jobs vs `json.dumps` of their output (the serialization
  floor); must stay below 3 (issue 9).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time

from gkeml_sdk import Accelerator, TpuSlice, TrainingJob
from gkeml_sdk.hardware import gpus, tpus


def import_seconds(statement: str, runs: int = 7) -> float:
    """Best wall time of an import statement in a fresh interpreter."""
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    best = min(
        float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(runs)
    )
    return best


def varied_jobs(count: int = 1000) -> list[TrainingJob]:
    """`count` jobs cycling over every GPU shape, TPU topology, Spot and node count."""
    accelerators: list[Accelerator | TpuSlice | None] = [None]
    accelerators += [Accelerator(g.key, count=c) for g in gpus.GPUS for c in g.counts]
    accelerators += [Accelerator(g.key, mig=p) for g in gpus.GPUS for p, _ in g.mig_profiles[:2]]
    accelerators += [TpuSlice(t.key, topo) for t in tpus.TPUS for topo in t.topologies(256)]
    jobs = []
    for i, (accelerator, spot) in enumerate(
        itertools.cycle(itertools.product(accelerators, (False, True)))
    ):
        if i == count:
            break
        nodes = 0 if isinstance(accelerator, TpuSlice) else 1 + i % 3
        if isinstance(accelerator, Accelerator) and not accelerator.on_demand_offered:
            spot = True  # e.g. a3-highgpu-1g: sold only as Spot or flex-start
        jobs.append(
            TrainingJob(
                name=f"job-{i}", image="img", command=["python", "train.py"],
                accelerator=accelerator, nodes=nodes, spot=spot, queue=f"team-{i % 5}",
                max_restarts=i % 4, env={"STEP": str(i)},
            )
        )  # fmt: skip
    return jobs


def compile_ratio(jobs: list[TrainingJob]) -> tuple[float, float, float]:
    """(compile, json.dumps, ratio) for the jobs in CPU seconds, best of 3 runs each: wall time
    would count what else the machine runs."""
    outputs = [job.compile() for job in jobs]
    compile_s = min(_timed(lambda: [job.compile() for job in jobs]) for _ in range(3))
    payload = [m.objects for m in outputs]
    dumps_s = min(_timed(lambda: [json.dumps(p) for p in payload]) for _ in range(3))
    return compile_s, dumps_s, compile_s / dumps_s


def _timed(fn: object) -> float:
    start = time.process_time()
    fn()  # type: ignore[operator]
    return time.process_time() - start


def main() -> None:
    theirs = import_seconds("import kubernetes")
    ours = import_seconds("import gkeml_sdk")
    print(f"import gkeml_sdk / import kubernetes = {ours / theirs:.3f} (limit 0.3)")
    # Public names load on first use; this is what a notebook pays for the first job.
    first_use = import_seconds("from gkeml_sdk import TrainingJob, Accelerator")
    print(f"from gkeml_sdk import TrainingJob / import kubernetes = {first_use / theirs:.3f}")
    ratio = compile_ratio(varied_jobs())[2]
    print(f"compile 1,000 varied jobs / json.dumps of their output = {ratio:.2f} (limit 3)")


if __name__ == "__main__":
    main()
