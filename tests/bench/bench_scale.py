"""Issue 25's table in one run: `python tests/bench/bench_scale.py`.

Runs every scale bench's `rows()` (listing runs, watches held by waits, preview reads, compile
+ YAML, the local backend's overhead) and prints one table of figure, goal and verdict. Figures
of one run on this machine; timing rows are ratios where a baseline exists. Pytest does not
collect this file.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.scale_rows import ScaleRow

BENCHES = (
    "tests.bench.scale_runs",
    "tests.bench.scale_watch",
    "tests.bench.bench_preview",
    "tests.bench.bench_budgets",
    "tests.bench.scale_local",
)


def main() -> int:
    print("| measured | figure | goal | verdict |\n|---|---|---|---|")
    table: list[ScaleRow] = []
    for name in BENCHES:
        for row in importlib.import_module(name).rows():
            print(row.line(), flush=True)
            table.append(row)
    return 0 if all(row.met for row in table) else 1


if __name__ == "__main__":
    raise SystemExit(main())
