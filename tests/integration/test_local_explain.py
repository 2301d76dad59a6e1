"""A local run explains its own states, and a local preview says it runs at once as local
processes: no queue, quota or scheduler on this machine."""

from __future__ import annotations

from pathlib import Path

from gkeml_sdk import Category, Client, LocalSettings, TrainingJob, Verdict
from gkeml_sdk.backends.local import LocalOptions


def test_a_local_run_explains_its_failure_and_its_success(tmp_path: Path) -> None:
    client = Client(local=LocalSettings(run_dir=tmp_path, options=LocalOptions(grace_seconds=1)))
    # Only rank 0 fails: were both to, whichever exit the supervisor sees first stops the other.
    code = "import os, sys\nsys.exit(3 if os.environ['NODE_RANK'] == '0' else 0)"
    failing = client.submit(TrainingJob.from_code(code, name="bad", nodes=2))
    failing.wait(timeout=60)
    found = failing.explain()
    assert found.category is Category.CRASH
    assert "process 0 exited with code 3" in found.sentence and "run.logs()" in found.sentence
    assert any(e.what == "exit code" and e.message == "3" for e in found.evidence)
    fine = client.submit(TrainingJob.from_code("print(1)", name="fine"))
    fine.wait(timeout=60)
    assert client.get_run("fine").explain().category is Category.SUCCEEDED


def test_a_local_preview_runs_now_as_processes(tmp_path: Path) -> None:
    client = Client(local=LocalSettings(run_dir=tmp_path))
    result = client.preview(TrainingJob.from_code("print(1)", name="p", nodes=3))
    assert result.verdict is Verdict.FITS
    assert "3 processes on this machine" in result.sentence and "no Kueue queue" in result.sentence
    assert list(tmp_path.iterdir()) == []  # nothing submitted
