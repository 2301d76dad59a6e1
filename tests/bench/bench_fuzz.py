"""The input fuzz at bench size (not a timed test): the CI fuzz of issue 21
(tests/unit/test_fuzz_inputs.py, tests/unit/test_fuzz_specs.py) with 20 times the examples,
randomized (CI replays the same derandomized ones on every run).

    python tests/bench/bench_fuzz.py [SCALE]

Prints the examples run and the result; exits non-zero when any input ended in a non-gkeml
exception or an object the Kubernetes rules refuse.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(scale: int) -> int:
    env = {
        **os.environ,
        "GKEML_FUZZ_SCALE": str(scale),
        "GKEML_FUZZ_EXAMPLES": str(150 * scale),  # test_fuzz_specs' own knob
        "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }
    files = ["tests/unit/test_fuzz_inputs.py", "tests/unit/test_fuzz_specs.py"]
    command = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *files]
    print(f"fuzz at {scale}x the CI examples:", flush=True)
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
