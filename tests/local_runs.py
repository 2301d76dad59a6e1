"""Handles over a `LocalBackend`'s run service, as `Client(backend="local")` makes them, for
tests that need the backend itself (its options per submit, `delete`, its service's reads)."""

from __future__ import annotations

from pathlib import Path

from gkeml_sdk.backends.local import LocalBackend
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.runs.handle import Run
from gkeml_sdk.training.model import TrainingJob


def submit(backend: LocalBackend, job: TrainingJob) -> Run:
    """`backend.submit(job)` as the handle `Client.submit` returns."""
    return Run(backend.service, backend.submit(job).ref)


def get_run(backend: LocalBackend, name: str) -> Run:
    """`backend.get_run(name)` as the handle `Client.get_run` returns."""
    return Run(backend.service, backend.get_run(name).ref)


def runs(backend: LocalBackend) -> list[Run]:
    """`backend.runs()` as the handles `Client.runs` returns."""
    return [Run(backend.service, snap.ref) for snap in backend.runs()]


def record_of(run: Run) -> LocalRunState:
    """The run's state on disk, as its service reads it (with a lost supervisor's outcome)."""
    return run._service.record(run.ref)  # type: ignore[attr-defined,no-any-return]


def checkpoints_of(run: Run) -> Path:
    """`GKEML_CHECKPOINT_DIR` of the run's processes: `checkpoints/` in its run directory."""
    path = run.snapshot().path
    assert path is not None, f"{run} is no local run"
    return Path(RunDir(path).checkpoints)
