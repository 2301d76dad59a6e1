"""Without the shared folder a run says, in its last lines, how many checks it skipped and how
to point at the folder (GKEML_SHARED); with it, nothing of the kind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shared_dir import SHARED

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = "tests/unit/runs/test_status.py"  # reads the recordings; quick


def run_pytest(shared: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GKEML_SHARED": str(shared), "PYTHONPATH": str(ROOT)}
    env.pop("GKEML_KUEUE_FIXTURES", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", SAMPLE],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300, check=False,
    )  # fmt: skip


def test_a_run_without_the_shared_folder_counts_its_skips_in_one_line(tmp_path: Path) -> None:
    done = run_pytest(tmp_path / "nowhere")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    said = [line for line in lines if "schema and recording checks skipped" in line]
    skipped = int(lines[-1].split(" skipped")[0].split()[-1])
    assert said == [
        f"{skipped} schema and recording checks skipped: the shared folder (CRD schemas, "
        f"recordings of a real control plane) was not found at {tmp_path / 'nowhere'}; set "
        "GKEML_SHARED to the folder holding crds/ and fixtures/ to run them"
    ]
    assert lines.index(said[0]) >= len(lines) - 3  # at the end, above pytest's own count


def test_a_run_with_the_shared_folder_says_nothing_of_it() -> None:
    if not (SHARED / "fixtures").is_dir():
        pytest.skip(f"the shared folder was not found at {SHARED}")
    done = run_pytest(SHARED)
    assert done.returncode == 0 and "skipped" not in done.stdout, done.stdout
