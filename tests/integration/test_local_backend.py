"""The local backend against real processes: contract, gang restarts, chaos, cancel, crash
recovery, persistence across backend instances."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from gkeml_sdk import (
    Client,
    FailureCause,
    LocalSettings,
    NotFoundError,
    RunExistsError,
    RunState,
    RunTimeoutError,
    TrainingJob,
)
from gkeml_sdk.backends.local import LocalBackend, LocalOptions
from gkeml_sdk.backends.local.runs import stopping
from gkeml_sdk.backends.local.system.procs import ProcessId, alive
from gkeml_sdk.runs.handle import Run
from tests.local_runs import checkpoints_of, get_run, record_of, runs, submit

FAST = LocalOptions(grace_seconds=0.5)

DUMP_ENV = """
import json, os
keys = [k for k in os.environ if k.startswith(("GKEML_", "MASTER_", "JAX_", "N", "WORLD"))]
print(json.dumps({k: os.environ[k] for k in sorted(keys)}))
"""

RESUMING = """
import json, os, pathlib, time
ckpt = pathlib.Path(os.environ["GKEML_CHECKPOINT_DIR"]) / f"r{os.environ['NODE_RANK']}.json"
step = json.loads(ckpt.read_text())["step"] if ckpt.exists() else 0
print("start", step, "attempt", os.environ["GKEML_RESTART_ATTEMPT"])
while step < 30:
    step += 1
    tmp = ckpt.with_suffix(".tmp")  # write then rename: a kill never leaves half a file
    tmp.write_text(json.dumps({"step": step}))
    tmp.replace(ckpt)
    time.sleep(0.03)
print("done", step)
"""


@pytest.fixture
def backend(tmp_path: Path) -> LocalBackend:
    return LocalBackend(run_dir=tmp_path, options=FAST)


def test_two_nodes_get_the_contract(backend: LocalBackend) -> None:
    run = submit(backend, TrainingJob.from_code(DUMP_ENV, name="env", nodes=2, env={"MINE": "1"}))
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    envs = {line[:3]: json.loads(line[4:]) for line in run.logs()}
    assert sorted(envs) == ["[0]", "[1]"]
    zero, one = envs["[0]"], envs["[1]"]
    assert (zero["NODE_RANK"], one["NODE_RANK"]) == ("0", "1")
    assert zero["MASTER_PORT"] == one["MASTER_PORT"]
    assert zero["MASTER_ADDR"] == "127.0.0.1"
    assert zero["NNODES"] == zero["WORLD_SIZE"] == "2"
    assert zero["GKEML_BACKEND"] == "local"
    assert zero["GKEML_RESTART_ATTEMPT"] == "0"
    assert zero["GKEML_CHECKPOINT_DIR"] == str(checkpoints_of(run))
    assert run.exit_codes == {"0": 0, "1": 0}


def test_gang_restarts_then_fails_as_user_code(backend: LocalBackend) -> None:
    code = "import os, sys\nprint('attempt', os.environ['GKEML_RESTART_ATTEMPT'])\n"
    code += "sys.exit(3 if os.environ['NODE_RANK'] == '1' else 0)\n"
    run = submit(backend, TrainingJob.from_code(code, name="flaky", nodes=2, max_restarts=2))
    status = run.wait(timeout=30)
    assert (status.state, status.cause, status.reason) == (
        RunState.FAILED,
        FailureCause.USER_CODE,
        "ReachedMaxRestarts",
    )
    assert run.counters.user_restarts == 2 and run.attempt == 3
    lines = run.logs()
    # Rank 1 prints, then fails every attempt; rank 0 may be stopped by the gang restart
    # before it prints or halfway through its line (on a loaded machine), but never prints
    # out of order.
    assert [line for line in lines if line.startswith("[1]")] == [
        "[1] attempt 0",
        "[1] attempt 1",
        "[1] attempt 2",
    ]
    whole = {f"[0] attempt {k}" for k in range(3)}
    rank0 = [line for line in lines if line.startswith("[0]")]
    assert all(any(w.startswith(line) for w in whole) for line in rank0), rank0
    printed = [line for line in rank0 if line in whole]
    assert printed == sorted(set(printed))
    assert [t.status.state for t in run.history].count(RunState.RESTARTING) == 2


def test_chaos_preempts_without_spending_restarts_and_code_resumes(tmp_path: Path) -> None:
    backend = LocalBackend(
        run_dir=tmp_path, options=LocalOptions(chaos_after=0.4, grace_seconds=0.5)
    )
    run = submit(backend, TrainingJob.from_code(RESUMING, name="chaos", nodes=2))
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    assert run.counters.preemptions == 1 and run.counters.user_restarts == 0
    states = [t.status.state for t in run.history]
    assert RunState.PREEMPTED in states
    starts = [line for line in backend.service.logs(run.ref, slot="0") if "start" in line]
    assert starts[0] == "[0] start 0 attempt 0"
    resumed_at = int(starts[1].split()[2])
    assert 0 < resumed_at < 30 and starts[1].endswith("attempt 1")


def test_single_pod_job_retries_only_its_own_failures(backend: LocalBackend) -> None:
    code = "import os, pathlib, sys\nmark = pathlib.Path(os.environ['GKEML_CHECKPOINT_DIR'], 'm')\n"
    code += "print('attempt', os.environ['GKEML_RESTART_ATTEMPT'])\n"
    code += "sys.exit(0 if mark.exists() else (mark.touch() or 1))\n"
    run = submit(backend, TrainingJob.from_code(code, name="retry", max_restarts=1))
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    assert list(run.logs()) == ["[0] attempt 0", "[0] attempt 1"]


def test_cancel_stops_every_process_of_the_group(backend: LocalBackend) -> None:
    code = "import subprocess, time\np = subprocess.Popen(['sleep', '60'])\n"
    # One string: with PYTHONUNBUFFERED each piece of print(a, b) is its own write, and a
    # read between them would see the line as far as 'child'.
    code += "print(f'child {p.pid}', flush=True)\ntime.sleep(60)\n"
    run = submit(backend, TrainingJob.from_code(code, name="cancel", nodes=2))
    children = _wait_for_lines(run, "child", 2)
    run.cancel()
    assert run.state.state is RunState.CANCELLED
    for pid in children + [p.pid for p in record_of(run).processes]:
        assert not alive(ProcessId(pid))
    run.cancel()  # idempotent


def test_cancel_waits_for_the_grace_of_the_local_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stopping, "CANCEL_MARGIN_SECONDS", 0.5)
    backend = LocalBackend(run_dir=tmp_path, options=LocalOptions(grace_seconds=2))
    code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready 1', flush=True)\ntime.sleep(60)\n"
    job = TrainingJob.from_code(code, name="stubborn", termination_grace_seconds=1)
    run = submit(backend, job)
    _wait_for_lines(run, "ready", 1)
    run.cancel()
    assert run.state.state is RunState.CANCELLED
    # The supervisor outlived the grace it was given and recorded the SIGKILL; a cancel that
    # waited for the job's 1 s would have killed it first, and nobody would have recorded it.
    assert run.exit_codes == {"0": -signal.SIGKILL}


def test_killed_supervisor_is_reported_and_leaves_nothing_running(backend: LocalBackend) -> None:
    run = submit(backend, TrainingJob(name="crash", command=["sleep", "60"], nodes=2))
    _wait_for_state(run, RunState.RUNNING)
    pids = [p.pid for p in record_of(run).processes]
    supervisor = json.loads((run.snapshot().path / "supervisor.json").read_text())["pid"]
    os.kill(supervisor, signal.SIGKILL)
    status = _wait_for_state(run, RunState.FAILED)
    assert (status.reason, status.cause) == ("SupervisorLost", FailureCause.INFRASTRUCTURE)
    deadline = time.monotonic() + 5
    while any(alive(ProcessId(p)) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(ProcessId(p)) for p in pids)


def test_max_runtime_deactivates_like_kueue(backend: LocalBackend) -> None:
    run = submit(backend, TrainingJob(name="slow", command=["sleep", "60"], max_runtime=1))
    status = run.wait(timeout=20)
    assert status.cause is FailureCause.DEACTIVATED
    assert status.reason == "DeactivatedDueToMaximumExecutionTimeExceeded"


def test_missing_command_is_a_user_error(backend: LocalBackend) -> None:
    run = submit(backend, TrainingJob(name="nocmd", command=["no-such-command-gkeml"]))
    assert run.wait(timeout=20).cause is FailureCause.USER_CODE
    assert "cannot start" in next(iter(run.logs()))


def test_runs_persist_across_backends_and_names_conflict(tmp_path: Path) -> None:
    first = Client(local=LocalSettings(run_dir=tmp_path, options=FAST))
    run = first.submit(TrainingJob(name="keep", command=["sleep", "60"]))
    with pytest.raises(RunExistsError) as conflict:
        first.submit(TrainingJob(name="keep", command=["true"]))
    assert "409" not in str(conflict.value) and "AlreadyExists" not in str(conflict.value)
    with pytest.raises(RunTimeoutError):
        run.wait(timeout=0.2)
    again = LocalBackend(run_dir=tmp_path)  # as after a kernel restart
    assert [r.name for r in runs(again)] == ["keep"]
    found = get_run(again, "keep")
    found.cancel()
    assert run.state.state is RunState.CANCELLED
    replaced = first.submit(TrainingJob(name="keep", command=["true"]))
    assert replaced.wait(timeout=20).state is RunState.SUCCEEDED
    with pytest.raises(NotFoundError):
        again.get_run("nope")
    refs = [snap.ref for snap in again.runs()]
    assert again.service.wait(refs, timeout=5)[0].state is RunState.SUCCEEDED


def test_follow_streams_until_done(backend: LocalBackend) -> None:
    code = "import time\nfor i in range(3):\n    print('tick', i)\n    time.sleep(0.1)\n"
    code += "print('partial', end='')\n"
    run = submit(backend, TrainingJob.from_code(code, name="follow"))
    lines = list(run.logs(follow=True))
    assert lines == ["[0] tick 0", "[0] tick 1", "[0] tick 2", "[0] partial"]
    assert run.state.terminal


def _wait_for_state(run: Run, state: RunState) -> object:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        status = run.state
        if status.state is state:
            return status
        time.sleep(0.05)
    raise AssertionError(f"{run.name} never reached {state}: {run.state}")


def _wait_for_lines(run: Run, word: str, count: int) -> list[int]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [int(line.split()[-1]) for line in run.logs() if word in line]
        if len(found) >= count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no {count} '{word}' lines in {list(run.logs())}")


def test_a_gang_restart_caused_by_rank_0_spends_one_restart(backend: LocalBackend) -> None:
    # The restart stops rank 1; that stop is no second failure of user code.
    code = "import os, sys, time\nfirst = os.environ['GKEML_RESTART_ATTEMPT'] == '0'\n"
    code += "if first and os.environ['NODE_RANK'] == '0':\n    sys.exit(3)\n"
    code += "time.sleep(0.5 if first else 0)\n"
    run = submit(backend, TrainingJob.from_code(code, name="rank0", nodes=2, max_restarts=1))
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    assert (run.counters.user_restarts, run.attempt) == (1, 2)


def test_gpudirect_and_dra_are_ignored_locally_with_one_note(
    backend: LocalBackend, caplog: pytest.LogCaptureFixture
) -> None:
    from gkeml_sdk import Accelerator

    job = TrainingJob.from_code(
        "print('ran')",
        name="fast",
        nodes=2,
        accelerator=Accelerator("h100-mega", count=8, allocation="dra"),
        procs_per_node=1,
    )
    with caplog.at_level("INFO", logger="gkeml_sdk.backends.local"):
        run = submit(backend, job)
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    notes = [r.getMessage() for r in caplog.records if "ignored locally" in r.getMessage()]
    assert notes == [
        "local run fast: GPUDirect-TCPXO networking and DRA device claims ignored locally "
        "(GKE only)"
    ]


def test_each_attempt_writes_from_a_new_line(backend: LocalBackend) -> None:
    # Attempt 0 stops mid-line (as a process killed mid-print does); attempt 1's output must
    # not be glued to it.
    code = "import os, sys\nif os.environ['GKEML_RESTART_ATTEMPT'] == '0':\n"
    code += "    sys.stdout.write('half')\n    sys.stdout.flush()\n    sys.exit(3)\n"
    code += "print('whole')\n"
    run = submit(backend, TrainingJob.from_code(code, name="glued", max_restarts=1))
    assert run.wait(timeout=30).state is RunState.SUCCEEDED
    assert list(run.logs()) == ["[0] half", "[0] whole"]
