"""Benchmark: `gkeml render` of one v5e-16 TPU job (TpuSlice("v5e", "4x4")) as a whole process,
against XPK's `xpk workload create --dry-run` of the same job (a ratio, not a timed test;
pytest does not collect this file).

    python tests/bench/bench_cli.py [--runs 21] [--xpk PATH]

XPK is looked up with `--xpk`, `$GKEML_BENCH_XPK` or `xpk` on PATH; where it is not installed
the ratio is against `python -c pass` instead, and the output says so. XPK runs with
TELEMETRY_ENABLED=false and DEPENDENCY_AUTO_DOWNLOAD=false; both run without a network
(`unshare -n`) where the machine allows it, so neither can reach any address. Python files are
byte-compiled first, as an installed wheel is: the bench times start-up, not compilation.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gkeml_sdk

SPEC = (
    "name: bench\nimage: img\ncommand: [python3, train.py]\n"
    "accelerator: {generation: v5e, topology: 4x4}\n"
)
XPK_ARGS = [
    "workload", "create", "--dry-run", "--cluster", "bench", "--workload", "bench",
    "--tpu-type", "v5litepod-16", "--command", "python3 train.py", "--docker-image", "img",
    "--project", "bench", "--zone", "us-central1-a",
]  # fmt: skip
XPK_ENV = {"TELEMETRY_ENABLED": "false", "DEPENDENCY_AUTO_DOWNLOAD": "false"}


def offline_prefix() -> list[str]:
    """`unshare -n` where it works here (root or user namespaces), else nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def medians(commands: list[tuple[list[str], dict[str, str]]], runs: int) -> list[float]:
    """Median wall time of each command over `runs` runs, interleaved so that load from other
    processes falls on all alike (after one warm-up run each, which must succeed)."""
    envs = [{**os.environ, **env} for _, env in commands]
    for (argv, _), env in zip(commands, envs, strict=True):
        warm = subprocess.run(argv, capture_output=True, env=env)
        if warm.returncode != 0:
            raise SystemExit(f"{argv[0]} failed:\n{warm.stderr.decode()[-2000:]}")
    samples: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for (argv, _), env, times in zip(commands, envs, samples, strict=True):
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            times.append(time.perf_counter() - start)
    return [statistics.median(times) for times in samples]


def gkeml_command() -> list[str]:
    script = Path(sys.executable).with_name("gkeml")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "gkeml_sdk.cli.main"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--xpk", default=os.environ.get("GKEML_BENCH_XPK") or shutil.which("xpk"))
    parser.add_argument("--gkeml", nargs="+", help="another gkeml command to time (default: ours)")
    args = parser.parse_args()
    compileall.compile_dir(Path(gkeml_sdk.__file__).parent, quiet=1)
    offline = offline_prefix()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "v5e-16.yaml"
        spec.write_text(SPEC)
        ours_argv = [*offline, *(args.gkeml or gkeml_command()), "render", str(spec)]
        # The floor every pydantic-based spec layer pays before reading a spec: the
        # interpreter plus `from pydantic import BaseModel`.
        floor_argv = [*offline, sys.executable, "-c", "from pydantic import BaseModel"]
        if args.xpk:
            baseline = ([*offline, args.xpk, *XPK_ARGS], XPK_ENV)
            baseline_name, target = "xpk workload create --dry-run", "  (target < 0.10)"
        else:
            print("XPK is not installed (pass --xpk PATH): comparing with `python -c pass`")
            baseline = ([*offline, sys.executable, "-c", "pass"], {})
            baseline_name, target = "python -c pass", ""
        ours, floor, theirs = medians([(ours_argv, {}), (floor_argv, {}), baseline], args.runs)
        print(f"gkeml render (v5e 4x4):               {ours * 1e3:7.1f} ms")
        print(f"python + pydantic import (floor):     {floor * 1e3:7.1f} ms")
        print(f"{baseline_name + ':':38}{theirs * 1e3:7.1f} ms")
        print(f"ratio gkeml / baseline:               {ours / theirs:7.3f}{target}")
        print(f"ratio floor / baseline:               {floor / theirs:7.3f}")
        print(f"medians of {args.runs} runs; network {'off' if offline else 'not isolated'}")


if __name__ == "__main__":
    main()
