"""Every example runs: the scripts as subprocesses, the notebook through a real kernel."""

from __future__ import annotations

import os
import re
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


def test_quickstart_output_is_short_every_rank_resumes_alike_and_ends_with_the_summary(
    no_cluster: dict[str, str],
) -> None:
    out = run_example("quickstart.py", no_cluster)
    lines = out.splitlines()
    assert len(lines) <= 40, out
    assert len(lines[0]) <= 100 and "running on this machine" in lines[0], lines[0]
    assert re.fullmatch(
        r"quickstart: Succeeded after [\d.]+ s, 1 preemption\(s\), attempt 2", lines[-1]
    ), out
    assert "== Preempted: SimulatedPreemption" in out
    # Both ranks resume from the newest complete checkpoint and know they restarted once.
    resumed = {line[:4]: line[4:] for line in lines if "resumed from step" in line}
    assert set(resumed) == {"[0] ", "[1] "}, out
    for line in resumed.values():
        step = re.fullmatch(r"resumed from step (\d+) \(restart 1\)", line)
        assert step and int(step[1]) > 0, out
    finals = {line[4:] for line in lines if re.match(r"\[\d\] done: w=", line)}
    assert len(finals) == 1, out  # the same model on every rank
    assert "would submit to GKE: ConfigMap/quickstart-gkeml-run, JobSet/quickstart" in out
    assert "kind: JobSet" not in out
    assert "get-credentials" in out


def test_status_lines_do_not_repeat_themselves(no_cluster: dict[str, str]) -> None:
    statuses = [line for line in run_example("quickstart.py", no_cluster).splitlines()
                if line.startswith("== ")]  # fmt: skip
    assert statuses, "no status lines"
    for line in statuses:
        labels = [part.strip() for part in line[3:].split(":")][:2]
        assert labels[0] != labels[-1] or len(labels) == 1, line
        assert "Submitted" not in line, line


def test_quickstart_shows_manifests_when_asked(no_cluster: dict[str, str]) -> None:
    out = run_example("quickstart.py", no_cluster, "--show-manifests", "--local")
    assert "kind: ConfigMap" in out and "kind: JobSet" in out and "name: quickstart" in out
    assert out.splitlines()[-1].startswith("quickstart: Succeeded")


@pytest.mark.parametrize(
    ("name", "needles"),
    [
        ("train_gpu.py", ["kind: JobSet", "nvidia-h100-80gb", "--nnodes=2", "<- this job"]),
        (
            "train_deepspeed.py",
            ["kind: JobSet", "- torchrun", "--nproc-per-node=8", "--rdzv-id=zero3", "<- this job"],
        ),
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
