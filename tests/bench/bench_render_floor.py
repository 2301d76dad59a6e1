"""Benchmark: instructions of `gkeml render` of the v5e-16 spec against the floor every
pydantic-based spec layer pays: the interpreter, PyYAML, pydantic and one small model
validated from YAML. Counted by valgrind (callgrind's "Collected" total, every instruction
the process runs), so the numbers do not move with the machine's load; the goal is a ratio
of at most 1.10. Pytest does not collect this file.

    python tests/bench/bench_render_floor.py

Both processes run with PYDANTIC_DISABLE_PLUGINS=__all__, the setting `gkeml render` gives
itself (tests/unit/cli/test_startup.py), so neither scans installed packages for plugins.
Python files are byte-compiled first, as an installed wheel is, and each command runs once
before it is counted, so that neither count includes writing the bytecode caches of the
standard library and site-packages (a fresh machine's first run does). Without valgrind the
bench says so and exits 2 (`apt-get install -y valgrind`).
"""

from __future__ import annotations

import compileall
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GOAL = 1.10
SPEC = (
    "name: bench\nimage: img\ncommand: [python3, train.py]\n"
    "accelerator: {generation: v5e, topology: 4x4}\n"
)
FLOOR = """
import yaml
from pydantic import BaseModel

class Small(BaseModel):
    name: str
    image: str
    command: list[str]

Small.model_validate(yaml.safe_load("name: bench\\nimage: img\\ncommand: [python3, train.py]\\n"))
"""


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """Every instruction `argv` runs, as callgrind counts them (after one run uncounted)."""
    valgrind = shutil.which("valgrind")
    assert valgrind
    subprocess.run(argv, capture_output=True, env=env, check=False)  # writes the .pyc caches
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"{argv} failed:\n{done.stderr[-3000:]}")
    return int(found.group(1))


def main() -> int:
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install -y valgrind): no instruction counts")
        return 2
    # The package next to this bench, not whichever one `import gkeml_sdk` finds first (from a
    # worktree that is the editable install's checkout, not the worktree's).
    root = Path(__file__).resolve().parents[2] / "gkeml_sdk"
    compileall.compile_dir(root, quiet=1)
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root.parent), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "v5e-16.yaml"
        spec.write_text(SPEC)
        floor_py = Path(tmp) / "floor.py"
        floor_py.write_text(FLOOR)
        compileall.compile_file(floor_py, quiet=1)
        render = [sys.executable, "-m", "gkeml_sdk.cli.main", "render", str(spec)]
        ours = instructions(render, env)
        floor = instructions([sys.executable, str(floor_py)], env)
    ratio = ours / floor
    print(f"gkeml render (v5e 4x4):                    {ours:>13,} instructions")
    print(f"floor (python + PyYAML + pydantic + model): {floor:>13,} instructions")
    verdict = "meets" if ratio <= GOAL else "misses"
    print(f"ratio render / floor:                       {ratio:13.3f}  ({verdict} goal <= {GOAL})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
