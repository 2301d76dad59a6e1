"""What a local run's supervisor costs: the modules its process imports (no pydantic, no spec
layer, none of the standard library's heavier modules) and how often it wakes up while its
processes run (once per exit, not once per poll). Counts read from a supervisor started with
the launcher's own command, its entry swapped for one that runs it in the foreground and
reports."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import RunState, TrainingJob
from gkeml_sdk.backends.local import LocalBackend
from gkeml_sdk.backends.local.runs import local_submit
from gkeml_sdk.backends.local.store import run_files
from gkeml_sdk.backends.local.supervision import detach
from gkeml_sdk.errors import ConfigError

REPORTING = """
import json, os, sys
sys.path.append(sys.argv.pop(1))
from gkeml_sdk.backends.local.supervision import supervisor
from gkeml_sdk.backends.local.system.procs import ProcessId
from gkeml_sdk.backends.local.store.run_store import RunDir
run = RunDir(sys.argv[1])
run.write_supervisor(ProcessId.of(os.getpid()))
waits = 0
sleep = supervisor._Wakeup.wait_until
def counted(self, *times):
    global waits
    waits += 1
    return sleep(self, *times)
supervisor._Wakeup.wait_until = counted
supervisor.Supervisor(run).supervise()
print(json.dumps({"modules": sorted(sys.modules), "waits": waits}))
"""
# Modules the supervisor's process does without: each costs a start that every run waits for.
HEAVY = (
    "subprocess", "tempfile", "shutil", "threading", "queue", "uuid", "logging", "pathlib",
    "socket", "pydantic", "yaml",
    "gkeml_sdk.runs.handle", "gkeml_sdk.runs.workload", "gkeml_sdk.training.model",
    "gkeml_sdk.backends.local.local_backend", "gkeml_sdk.backends.local.plan.local_options",
)  # fmt: skip
# Each rank outlives several of the old 50 ms polls, so a polling loop would wake many times.
SLEEPER = ["python", "-c", "import time; time.sleep(0.4)"]


@pytest.fixture
def reports(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def foreground(path: Path, secrets: dict[str, str]) -> Iterator[None]:
        yield  # the run's files are written
        argv = detach.supervisor_command(path)
        argv[argv.index("-c") + 1] = REPORTING
        done = subprocess.run(argv, capture_output=True, check=True, timeout=120)
        found.append(json.loads(done.stdout))

    monkeypatch.setattr(local_submit, "supervisor_launch", foreground)
    return found


def test_the_supervisor_imports_neither_pydantic_nor_the_spec_layer(
    tmp_path: Path, reports: list[dict[str, Any]]
) -> None:
    job = TrainingJob(name="lean", command=["python", "-c", "pass"], nodes=2)
    snap = LocalBackend(run_dir=tmp_path).submit(job)  # its supervisor ran in the foreground
    assert snap.status.state is RunState.SUCCEEDED
    modules = reports[0]["modules"]
    assert "gkeml_sdk.backends.local.supervision.supervisor" in modules  # a supervisor's report
    assert [m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core", "yaml")] == []
    # The launcher is the stdlib-only program a pod runs, shared so restarts count alike.
    training = [m for m in modules if m.startswith("gkeml_sdk.training")]
    assert training == ["gkeml_sdk.training", "gkeml_sdk.training.launcher"]
    assert "gkeml_sdk.backends.local.local_backend" not in modules
    assert [m for m in HEAVY if m in modules] == []


def test_the_launcher_starts_without_heavy_modules() -> None:
    # The launcher's own command, stopped after its imports: what runs before the fork.
    argv = detach.supervisor_command(Path("/nonexistent/default/run"))
    entry = argv.index("-c") + 1
    argv[entry] = argv[entry].replace(
        "main(sys.argv[1:])", "print(json.dumps(sorted(sys.modules)))"
    )
    argv[entry] = "import json; " + argv[entry]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60)
    modules = json.loads(done.stdout)
    assert "gkeml_sdk.backends.local.supervision.supervisor" in modules
    assert [m for m in HEAVY if m in modules] == []


def test_the_supervisor_wakes_once_per_exit_not_per_poll(
    tmp_path: Path, reports: list[dict[str, Any]]
) -> None:
    snap = LocalBackend(run_dir=tmp_path).submit(TrainingJob(name="s", command=SLEEPER, nodes=2))
    assert snap.status.state is RunState.SUCCEEDED
    assert snap.exit_codes == {"0": 0, "1": 0}
    # Woken by each exit's SIGCHLD (two exits close together share one wake-up, and both may
    # be over before the first check); a 50 ms poll would have woken at least 8 times.
    assert reports[0]["waits"] <= 2


def test_a_submit_that_fails_while_writing_stops_its_launcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The launcher starts before the run's files are written; a failure there must leave no
    # launcher waiting and no supervisor.
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_files, "plan_launch", broken)
    with pytest.raises(ConfigError, match=r"the disk holding it is full \(No space left"):
        LocalBackend(run_dir=tmp_path).submit(TrainingJob(name="full", command=["true"]))
    run_path = str(tmp_path / "default" / "full")
    assert not (tmp_path / "default" / "full").exists()  # removed: its space is given back
    assert [pid for pid in _pids() if run_path in _cmdline(pid)] == []


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
