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


def median_seconds(argv: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    """Median wall time of `runs` runs of `argv` (after one warm-up run that must succeed)."""
    full_env = {**os.environ, **(env or {})}
    warm = subprocess.run(argv, capture_output=True, env=full_env)
    if warm.returncode != 0:
        raise SystemExit(f"{argv[0]} failed:\n{warm.stderr.decode()[-2000:]}")
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=full_env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def gkeml_command() -> list[str]:
    script = Path(sys.executable).with_name("gkeml")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "gkeml_sdk.cli"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--xpk", default=os.environ.get("GKEML_BENCH_XPK") or shutil.which("xpk"))
    args = parser.parse_args()
    compileall.compile_dir(Path(gkeml_sdk.__file__).parent, quiet=1)
    offline = offline_prefix()
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "v5e-16.yaml"
        spec.write_text(SPEC)
        ours = median_seconds([*offline, *gkeml_command(), "render", str(spec)], args.runs)
        print(f"gkeml render (v5e 4x4):               {ours * 1e3:7.1f} ms")
        if args.xpk:
            theirs = median_seconds([*offline, args.xpk, *XPK_ARGS], args.runs, env=XPK_ENV)
            print(f"xpk workload create --dry-run:        {theirs * 1e3:7.1f} ms")
            print(f"ratio gkeml / xpk:                    {ours / theirs:7.3f}  (target < 0.10)")
        else:
            bare = median_seconds([*offline, sys.executable, "-c", "pass"], args.runs)
            print("XPK is not installed (pass --xpk PATH): comparing with `python -c pass`")
            print(f"python -c pass:                       {bare * 1e3:7.1f} ms")
            print(f"ratio gkeml / python -c pass:         {ours / bare:7.2f}")
        print(f"medians of {args.runs} runs; network {'off' if offline else 'not isolated'}")


if __name__ == "__main__":
    main()
