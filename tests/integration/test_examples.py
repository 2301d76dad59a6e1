"""Every example runs: the scripts as subprocesses, the notebook through a real kernel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment with no kubeconfig and a throwaway run directory."""
    env = {**os.environ, "GKEML_RUN_DIR": str(tmp_path / "runs")}
    env["KUBECONFIG"] = str(tmp_path / "no-kubeconfig")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def run_example(name: str, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_quickstart_runs_locally_resumes_and_prints_manifests(no_cluster: dict[str, str]) -> None:
    out = run_example("quickstart.py", no_cluster)
    assert "running on this machine instead" in out
    assert "== Preempted: SimulatedPreemption" in out
    for rank in ("[0]", "[1]"):
        resumed = [
            line for line in out.splitlines() if line.startswith(f"{rank} resumed from step")
        ]
        assert len(resumed) == 1, out
        assert f"{rank} done: w=" in out
    assert "quickstart: Succeeded" in out and "1 preemption(s), attempt 2" in out
    assert "kind: ConfigMap" in out and "kind: JobSet" in out and "name: quickstart" in out


@pytest.mark.parametrize(
    ("name", "needles"),
    [
        ("train_gpu.py", ["kind: JobSet", "nvidia-h100-80gb", "--nnodes=$(NNODES)", "<- this job"]),
        ("train_tpu.py", ["kind: JobSet", "tpu-v5-lite-podslice", "google.com/tpu: 4", "4x4"]),
        (
            "setup_cluster.py",
            [
                "kind: ClusterQueue",
                "name: research-queued",
                "queued-provisioning.gke.io",
                "cloud.google.com/gke-queued: 'true'",
                "flex-start  $",
                "<- this job",
            ],
        ),
    ],
)
def test_manifest_examples(no_cluster: dict[str, str], name: str, needles: list[str]) -> None:
    out = run_example(name, no_cluster)
    for needle in needles:
        assert needle in out, needle


def outputs(cell: Any) -> str:
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        else:
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_quickstart_notebook_through_a_kernel(no_cluster: dict[str, str]) -> None:
    path = EXAMPLES / "notebooks" / "quickstart.ipynb"
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    code = [c for c in notebook.cells if c.cell_type == "code"]
    by_source = {c.source.splitlines()[0]: outputs(c) for c in code}
    train = next(v for k, v in by_source.items() if k.startswith("%%gke_train --local"))
    assert "[0] resumed from step" in train and "[1] resumed from step" in train
    assert "[1] done on rank 1 of 2: total" in train
    assert "nb-quickstart (default): Succeeded" in train
    status = by_source["%gke_status nb-quickstart"]
    assert "Preempted: SimulatedPreemption" in status and "attempt 2" in status
    logs = by_source["%gke_logs nb-quickstart --rank 1"]
    assert all(line.startswith("[1] ") for line in logs.strip().splitlines())
    dry = next(v for k, v in by_source.items() if k.startswith("%%gke_train --dry-run"))
    assert "valid: TrainingJob('llama-ft'" in dry and "kind: JobSet" in dry
    assert "<- this job" in by_source["%gke_cost --gpu h100:8 --nodes 2 --spot --hours 10"]
    assert "nb-quickstart" in by_source["%gke_jobs"]
