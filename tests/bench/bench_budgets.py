"""Issue 33's three budgets, each printed as a ratio measured in this run beside its goal (a
benchmark, not a timed test; pytest does not collect this file):

    python tests/bench/bench_budgets.py [--xpk PATH]

1. `gkeml render` of a TPU v5e-16 job, in instructions: at most 1.5x its floor (a process
   that imports PyYAML and pydantic, validates one small model and prints its YAML), and
   below 0.35x XPK 1.16's `xpk workload create --dry-run` of the same job. Counted by
   valgrind's callgrind (every instruction of the process, whatever the machine's load) and,
   beside it, by `perf stat -e instructions:u` where the machine exposes that counter.
   Python files are byte-compiled and each command runs once uncounted first, so no count
   includes writing bytecode caches. PYDANTIC_DISABLE_PLUGINS=__all__ for all, so no process
   scans the installed packages for pydantic plugins. XPK is looked up with `--xpk`,
   $GKEML_BENCH_XPK or `xpk` on PATH, else its figure is skipped; it runs with
   TELEMETRY_ENABLED=false and DEPENDENCY_AUTO_DOWNLOAD=false, and every process runs without
   a network (`unshare -n`) where the machine allows it.
2. Compile + YAML of 1,000 varied jobs, CPU time in this process (best of 5): at most 1.3x
   compiling them plus `yaml.dump_all(..., Dumper=yaml.CSafeDumper, sort_keys=False)` of the
   same dicts.
3. `import gkeml_sdk`, CPU time of the import in fresh processes (best of 7): below 0.3x
   `import kubernetes`.

The gkeml_sdk measured is the one beside this file (in a worktree, not the editable install).
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import yaml

from tests.bench.bench_core import varied_jobs
from tests.bench.scale_rows import ScaleRow

ROOT = Path(__file__).resolve().parents[2]

RENDER_GOAL, XPK_GOAL, YAML_GOAL, IMPORT_GOAL = 1.5, 0.35, 1.3, 0.3
SPEC = (
    "name: bench\nimage: img\ncommand: [python3, train.py]\n"
    "accelerator: {generation: v5e, topology: 4x4}\n"
)
FLOOR = """
import sys

import yaml
from pydantic import BaseModel


class Small(BaseModel):
    name: str
    image: str
    command: list[str]


SPEC = "name: bench\\nimage: img\\ncommand: [python3, train.py]\\n"
small = Small.model_validate(yaml.safe_load(SPEC))
sys.stdout.write(yaml.safe_dump(small.model_dump(), sort_keys=False))
"""
XPK_ARGS = [
    "workload", "create", "--dry-run", "--cluster", "bench", "--workload", "bench",
    "--tpu-type", "v5litepod-16", "--command", "python3 train.py", "--docker-image", "img",
    "--project", "bench", "--zone", "us-central1-a",
]  # fmt: skip
XPK_ENV = {"TELEMETRY_ENABLED": "false", "DEPENDENCY_AUTO_DOWNLOAD": "false"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xpk", default=os.environ.get("GKEML_BENCH_XPK") or shutil.which("xpk"))
    args = parser.parse_args()
    met = [render_budget(args.xpk), yaml_budget(), import_budget()]
    return 0 if all(met) else 1


def render_budget(xpk: str | None) -> bool:
    print("1. gkeml render of a TPU v5e-16 job, instructions of the whole process")
    if shutil.which("valgrind") is None:
        print("   valgrind is not installed (apt-get install -y valgrind): not measured")
        return True
    compileall.compile_dir(ROOT / "gkeml_sdk", quiet=1)
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__", "PYTHONPATH": str(ROOT)}
    offline = _offline_prefix()
    with tempfile.TemporaryDirectory() as tmp:
        spec, floor_py = Path(tmp) / "v5e-16.yaml", Path(tmp) / "floor.py"
        spec.write_text(SPEC)
        floor_py.write_text(FLOOR)
        compileall.compile_file(floor_py, quiet=1)
        floor = "floor (PyYAML + pydantic + 1 model)"
        render = [sys.executable, "-m", "gkeml_sdk.cli.main", "render", str(spec)]
        commands = {"gkeml render": (render, env), floor: ([sys.executable, str(floor_py)], env)}
        if xpk:
            commands["xpk workload create --dry-run"] = ([xpk, *XPK_ARGS], {**env, **XPK_ENV})
        counts = {
            name: (_callgrind(offline, argv, its_env, tmp), _perf(offline, argv, its_env, tmp))
            for name, (argv, its_env) in commands.items()
        }
    print(f"   {'':38}{'callgrind':>15}{'perf stat':>15}")
    for name, (by_callgrind, by_perf) in counts.items():
        perf = f"{by_perf:,}" if by_perf else "not counted"
        print(f"   {name:38}{by_callgrind:>15,}{perf:>15}")
    ours = counts["gkeml render"][0]
    met = _ratio("render / floor", ours / counts[floor][0], RENDER_GOAL)
    if xpk:
        theirs = counts["xpk workload create --dry-run"][0]
        met &= _ratio("render / XPK dry run", ours / theirs, XPK_GOAL, below=True)
    else:
        print("   render / XPK dry run: skipped, XPK is not installed (--xpk PATH)")
    if not offline:
        print("   (network not isolated: `unshare -n` does not work here)")
    if counts["gkeml render"][1] is None:
        print("   (perf stat: this machine exposes no instruction counter)")
    return met


def yaml_budget() -> bool:
    print("2. compile + YAML of 1,000 varied jobs, CPU time in one process")
    found = yaml_ratio()
    if found is None:
        print("   PyYAML has no libyaml (CSafeDumper) here: the baseline cannot be measured")
        return True
    ours, compile_s, dump_s = found
    print(f"   compile + to_yaml():                  {ours:8.3f} s")
    print(f"   compile:                              {compile_s:8.3f} s")
    print(f"   yaml.dump_all(CSafeDumper) of them:   {dump_s:8.3f} s")
    ratio = ours / (compile_s + dump_s)
    return _ratio("ours / (compile + CSafeDumper)", ratio, YAML_GOAL)


def yaml_ratio() -> tuple[float, float, float] | None:
    """CPU seconds (best of 5) of compile + `to_yaml()`, of compile alone and of
    CSafeDumper writing the compiled objects; None without libyaml."""
    if not yaml.__with_libyaml__:
        return None
    jobs = varied_jobs(1000)
    payload = [job.compile().objects for job in jobs]  # also warms every cache

    def dump() -> None:
        for objects in payload:
            yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=False)

    ours, compile_s, dump_s = _best(
        [
            lambda: [job.compile().to_yaml() for job in jobs],
            lambda: [job.compile() for job in jobs],
            dump,
        ],
        runs=5,
    )
    return ours, compile_s, dump_s


def import_budget() -> bool:
    print("3. import, CPU time in fresh processes")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = "import time; t = time.process_time(); import {}; print(time.process_time() - t)"
    seconds = {name: float("inf") for name in ("gkeml_sdk", "kubernetes")}
    for _ in range(7):
        for name in seconds:
            argv = [sys.executable, "-c", code.format(name)]
            out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
            seconds[name] = min(seconds[name], float(out.stdout))
    for name, cpu in seconds.items():
        print(f"   import {name + ':':31}{cpu * 1e3:8.1f} ms")
    ratio = seconds["gkeml_sdk"] / seconds["kubernetes"]
    return _ratio("import gkeml_sdk / import kubernetes", ratio, IMPORT_GOAL, below=True)


def rows() -> list[ScaleRow]:
    """The compile + YAML row of issue 25's scale table (`bench_scale.py`)."""
    found = yaml_ratio()
    if found is None:
        return []
    ours, compile_s, dump_s = found
    ratio = ours / (compile_s + dump_s)
    what = "compile + YAML of 1,000 jobs / (compile + CSafeDumper)"
    return [ScaleRow(what, f"{ratio:.2f}", f"at most {YAML_GOAL}", ratio <= YAML_GOAL)]


def _ratio(what: str, ratio: float, limit: float, below: bool = False) -> bool:
    met = ratio < limit if below else ratio <= limit
    goal = f"{'below' if below else 'at most'} {limit}"
    print(f"   {what + ':':38}{ratio:8.3f}   goal {goal:12} {'meets' if met else 'MISSES'}")
    return met


def _best(functions: list[Callable[[], object]], runs: int) -> list[float]:
    """The least CPU time of each function over `runs` rounds, interleaved so that load from
    other processes falls on all alike."""
    best = [float("inf")] * len(functions)
    for _ in range(runs):
        for index, function in enumerate(functions):
            start = time.process_time()
            function()
            best[index] = min(best[index], time.process_time() - start)
    return best


def _offline_prefix() -> list[str]:
    """`unshare -n` where it works here (root or user namespaces), else nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def _callgrind(offline: list[str], argv: list[str], env: dict[str, str], cwd: str) -> int:
    """Every instruction `argv` runs, as callgrind counts them (after one run uncounted)."""
    first = subprocess.run([*offline, *argv], capture_output=True, text=True, env=env, cwd=cwd)
    if first.returncode:
        raise SystemExit(f"{argv} failed:\n{first.stderr[-3000:]}")
    valgrind = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = subprocess.run(
        [*offline, *valgrind, *argv], capture_output=True, text=True, env=env, cwd=cwd
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"{argv} failed under valgrind:\n{done.stderr[-3000:]}")
    return int(found.group(1))


def _perf(offline: list[str], argv: list[str], env: dict[str, str], cwd: str) -> int | None:
    """User-space instructions of `argv` by `perf stat`; None where there is no counter."""
    if shutil.which("perf") is None:
        return None
    perf = ["perf", "stat", "-x", ",", "-e", "instructions:u", "--"]
    done = subprocess.run(
        [*offline, *perf, *argv], capture_output=True, text=True, env=env, cwd=cwd
    )
    last = done.stderr.strip().splitlines()[-1:] or [""]
    value = last[0].split(",")[0]
    return int(value) if value.isdigit() else None


if __name__ == "__main__":
    raise SystemExit(main())
