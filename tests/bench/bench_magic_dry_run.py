"""Benchmark: `%%gke_train --dry-run` of a two-node GPU job in an IPython shell, against a bare
`TrainingJob(...).compile()` of the same job (a ratio, not a timed test; pytest does not
collect this file).

    python tests/bench/bench_magic_dry_run.py

The magic parses the line, builds the job from the cell, compiles it, estimates its cost and
renders text and HTML (including the YAML); the bare call only compiles. The ratio shows the
magic's overhead; `compile() + to_yaml()` is reported as the floor of what a dry run must do.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from gkeml_sdk import Accelerator, TrainingJob

LINE = "--dry-run --gpu h100:8 --nodes 2 --spot --max-restarts 3 --image img:1 --name bench"
CELL = "import os\nprint('rank', os.environ['NODE_RANK'])\n"


def bench_job() -> TrainingJob:
    return TrainingJob.from_code(
        CELL,
        name="bench",
        image="img:1",
        accelerator=Accelerator("h100", count=8),
        nodes=2,
        spot=True,
        max_restarts=3,
    )


def bare() -> None:
    bench_job().compile()


def bare_yaml() -> None:
    bench_job().compile().to_yaml()


def median_seconds(fn: Callable[[], object], repeat: int = 200) -> float:
    fn()  # warm caches (pydantic schemas, catalog lookups)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "gkeml_magics")

    def magic() -> None:
        # Capturing formats the display as a kernel does: text/plain and text/html.
        with capture_output():
            shell.run_cell_magic("gke_train", LINE, CELL)

    with capture_output() as captured:
        shell.run_cell_magic("gke_train", LINE, CELL)
    assert "kind: JobSet" in captured.outputs[0].data["text/plain"], "dry run failed"
    t_magic = median_seconds(magic)
    t_bare = median_seconds(bare)
    t_yaml = median_seconds(bare_yaml)
    print(f"%%gke_train --dry-run (2 x h100:8): {t_magic * 1e3:7.2f} ms")
    print(f"TrainingJob(...).compile():          {t_bare * 1e3:7.2f} ms")
    print(f"  compile() + to_yaml():             {t_yaml * 1e3:7.2f} ms")
    print(f"ratio magic / compile():             {t_magic / t_bare:7.1f}")
    print(f"ratio magic / compile()+to_yaml():   {t_magic / t_yaml:7.1f}")


if __name__ == "__main__":
    main()
