"""The local backend with real competing processes: one submission per run name at a time,
a killed submitter that leaves nothing blocked, and a SIGKILLed supervisor whose run ends
with what really happened. Outcomes are asserted, never how long anything took."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gkeml_sdk import FailureCause, RunState, SpecError, TrainingJob
from gkeml_sdk.backends.local import LocalBackend, LocalOptions
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.procs import ProcessId, alive, group_alive
from gkeml_sdk.runs.handle import Run
from tests.local_runs import get_run, record_of, submit

FAST = LocalOptions(grace_seconds=0.5)
ROOT = Path(__file__).resolve().parents[2]

# Each racer waits at a barrier file, then submits; it prints one JSON line of its outcome.
RACER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from gkeml_sdk import GkemlError, TrainingJob
    from gkeml_sdk.backends.local import LocalBackend, LocalOptions
    root, go = sys.argv[1], Path(sys.argv[2])
    job = TrainingJob(name="race", command=[sys.executable, "-c", "import time; time.sleep(60)"])
    backend = LocalBackend(run_dir=root, options=LocalOptions(grace_seconds=0.5))
    while not go.exists():
        time.sleep(0.005)
    try:
        snap = backend.submit(job)
        print(json.dumps({"won": True, "state": snap.status.state.value}))
    except GkemlError as exc:
        print(json.dumps({"won": False, "error": type(exc).__name__, "status":
                          getattr(exc, "status", 0), "text": str(exc)}))
    except BaseException as exc:
        print(json.dumps({"won": False, "error": "RAW " + type(exc).__name__, "text": str(exc)}))
    """
)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def test_six_processes_submitting_one_name_admit_exactly_one(tmp_path: Path) -> None:
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path / "runs"), str(go)],
            stdout=subprocess.PIPE,
            env=_env(),
            text=True,
        )
        for _ in range(6)
    ]
    go.touch()
    outcomes = [json.loads(racer.communicate(timeout=600)[0]) for racer in racers]
    try:
        winners = [o for o in outcomes if o["won"]]
        losers = [o for o in outcomes if not o["won"]]
        assert len(winners) == 1, outcomes
        # Every loser got the answer for a name in use, in local words, nothing raw.
        assert {(o["error"], o["status"]) for o in losers} == {("RunExistsError", 0)}, losers
        assert all("is " in o["text"] and "choose another name" in o["text"] for o in losers)
        run = get_run(LocalBackend(run_dir=tmp_path / "runs"), "race")
        assert not run.state.terminal
        # One supervisor ran this directory: one launch, one start of its single process.
        starts = [t for t in run.history if t.status.state is RunState.STARTING]
        assert len(starts) == 1 and len(record_of(run).processes) == 1
    finally:
        get_run(LocalBackend(run_dir=tmp_path / "runs"), "race").cancel()


KILLED_SUBMITTER = textwrap.dedent(
    """
    import contextlib, sys, time
    from gkeml_sdk import TrainingJob
    from gkeml_sdk.backends.local import LocalBackend
    from gkeml_sdk.backends.local.runs import local_submit
    @contextlib.contextmanager
    def hang(path, secrets):  # the submitter dies here, before its supervisor is recorded
        yield
        print("launching", flush=True)
        time.sleep(600)
    local_submit.supervisor_launch = hang
    LocalBackend(run_dir=sys.argv[1]).submit(TrainingJob(name="orphan", command=["true"]))
    """
)


def test_a_killed_submitter_leaves_the_name_free_at_once(tmp_path: Path) -> None:
    submitter = subprocess.Popen(
        [sys.executable, "-c", KILLED_SUBMITTER, str(tmp_path)],
        stdout=subprocess.PIPE,
        env=_env(),
        text=True,
    )
    assert submitter.stdout is not None
    assert submitter.stdout.readline().strip() == "launching"
    backend = LocalBackend(run_dir=tmp_path, options=FAST)
    # While it lives, its submission is in progress: the run reads PENDING, not failed.
    assert backend.get_run("orphan").status.state is RunState.PENDING
    submitter.kill()
    submitter.wait()
    status = backend.get_run("orphan").status
    assert (status.state, status.reason) == (RunState.FAILED, "SupervisorNotStarted")
    again = submit(backend, TrainingJob(name="orphan", command=["true"]))
    assert again.wait(timeout=120).state is RunState.SUCCEEDED


IGNORES_SIGTERM = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
    "print('child', child.pid, flush=True)\n"
    "time.sleep(600)\n"
)


def test_a_sigkilled_supervisor_takes_whole_process_groups_down(tmp_path: Path) -> None:
    backend = LocalBackend(run_dir=tmp_path, options=FAST)
    run = submit(backend, TrainingJob.from_code(IGNORES_SIGTERM, name="stubborn", nodes=2))
    children = _lines(run, "child", 2)
    leaders = [p.id for p in record_of(run).processes]
    supervisor = RunDir(run.snapshot().path).read_supervisor()
    assert supervisor is not None
    os.kill(supervisor.pid, signal.SIGKILL)
    _until(lambda: not alive(supervisor))
    before = (run.snapshot().path / "state.json").read_bytes()
    status = run.state  # the next read sees the supervisor gone
    assert (status.state, status.reason) == (RunState.FAILED, "SupervisorLost")
    assert status.cause is FailureCause.INFRASTRUCTURE
    assert "0: no exit code recorded" in status.message
    # A reader neither writes nor signals: the processes that ignored SIGTERM still run.
    assert (run.snapshot().path / "state.json").read_bytes() == before
    assert all(group_alive(leader) for leader in leaders)
    # Cancel stops what the lost supervisor left; the run had already ended, so it says False.
    assert run.cancel() is False
    assert not any(group_alive(leader) for leader in leaders)
    assert not any(alive(ProcessId(pid)) for pid in children)


def test_exit_codes_recorded_before_a_crash_decide_the_outcome(tmp_path: Path) -> None:
    backend = LocalBackend(run_dir=tmp_path, options=FAST)
    run = submit(backend, TrainingJob(name="done", command=["true"], nodes=2))
    assert run.wait(timeout=120).state is RunState.SUCCEEDED
    # As the supervisor leaves it when killed after recording both exits but before its
    # last write: RUNNING, both exit codes 0, the supervisor gone.
    record = record_of(run)
    record.status = record.history[-2].status
    record.finished = None
    RunDir(run.snapshot().path).write(record)
    assert all(p.exit_code == 0 for p in record.processes)
    status = run.state
    assert (status.state, status.reason) == (RunState.SUCCEEDED, "Completed")
    # With one process's exit code 3 recorded, the same crash is a failure that says so.
    record.status, record.finished = record.history[-2].status, None
    record.processes[1].exit_code = 3
    RunDir(run.snapshot().path).write(record)
    status = run.state
    assert status.state is RunState.FAILED and "1: exit code 3" in status.message


def test_a_secret_reference_never_reaches_a_local_processs_argv(tmp_path: Path) -> None:
    job = TrainingJob(
        name="argv",
        command=["python", "-c", "import sys; print(sys.argv)", "--token=$(HF_TOKEN)"],
        secret_env={"HF_TOKEN": "hf/token"},
    )
    os.environ["HF_TOKEN"] = "hf_" + "x" * 34
    try:
        with pytest.raises(SpecError, match=r"\$\(HF_TOKEN\).*arguments") as caught:
            LocalBackend(run_dir=tmp_path).submit(job)
        assert "os.environ['HF_TOKEN']" in str(caught.value)
        assert not any(tmp_path.iterdir())  # refused before anything was written
    finally:
        del os.environ["HF_TOKEN"]


def _lines(run: Run, word: str, count: int) -> list[int]:
    found: list[int] = []

    def enough() -> bool:
        found[:] = [int(line.split()[-1]) for line in run.logs() if word in line]
        return len(found) >= count

    _until(enough)
    return found


def _until(condition: object) -> None:
    # An event, polled; the bound only turns a hang into a failure, it is no timing claim.
    deadline = time.monotonic() + 300
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.02)
