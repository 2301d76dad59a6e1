"""`LocalRunService`, the port of the local backend, on run directories written as a supervisor
leaves them (no supervisor runs here): snapshots carry exit codes and the folder, a damaged run
lists as an UNREADABLE snapshot whose verbs raise why, a stale handle reads and cancels nothing
of a later submission, and `wait` reports transitions and names the runs still going."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from gkeml_sdk import TrainingJob
from gkeml_sdk.backends.local import LocalBackend
from gkeml_sdk.backends.local.plan.local_options import LocalOptions
from gkeml_sdk.backends.local.store.run_files import write_run
from gkeml_sdk.backends.local.store.run_state import ProcessRecord
from gkeml_sdk.backends.local.store.run_store import STATE, RunDir
from gkeml_sdk.backends.local.system.procs import ProcessId
from gkeml_sdk.errors import ConfigError, NotFoundError, RunTimeoutError
from gkeml_sdk.runs.handle import Run, RunState, RunStatus
from gkeml_sdk.runs.service import RunRef

_PID_MAX = int(Path("/proc/sys/kernel/pid_max").read_text()) if Path("/proc").is_dir() else 99999
GHOST = ProcessId(_PID_MAX + 7, 12345)  # no process has it: signalling it reaches nobody


def _run(root: Path, name: str, supervisor: ProcessId, exit_code: int | None) -> RunDir:
    """A RUNNING run of one process that exited with `exit_code` (None: still running)."""
    run = RunDir(root / "default" / name)
    record = write_run(TrainingJob(name=name, command=["true"]), "default", run, {}, LocalOptions())
    record.move(RunStatus(RunState.RUNNING, "Running", "1 process(es)"))
    record.processes.append(ProcessRecord("0", GHOST.pid, GHOST.start, 1, exit_code=exit_code))
    run.write(record)
    run.write_supervisor(supervisor)
    Path(run.log_path("0")).write_text("hello\n")
    return run


def _live(root: Path, name: str) -> RunDir:
    # Its supervisor is this test process: alive, so the run reads RUNNING; never cancelled here.
    return _run(root, name, ProcessId.of(os.getpid()), None)


def test_a_snapshot_carries_the_exit_codes_and_the_run_directory(tmp_path: Path) -> None:
    run = _run(tmp_path, "done", GHOST, 0)
    backend = LocalBackend(run_dir=tmp_path)
    snap = backend.get_run("done")
    assert snap.status.state is RunState.SUCCEEDED  # exit 0 recorded before the supervisor died
    assert snap.exit_codes == {"0": 0} and snap.path == Path(run.path)
    assert snap.ref == RunRef("done", "default", run.read().created)
    handle = Run(backend.service, snap.ref)
    assert handle.exit_codes == {"0": 0} and list(handle.logs()) == ["[0] hello"]
    assert backend.service.job(snap.ref).name == "done"


def test_a_damaged_run_is_an_unreadable_snapshot_whose_verbs_raise_why(tmp_path: Path) -> None:
    _run(tmp_path, "fine", GHOST, 0)
    _run(tmp_path, "broken", GHOST, 0)
    (tmp_path / "default" / "broken" / STATE).write_text("[]")
    backend = LocalBackend(run_dir=tmp_path)
    listed = backend.runs()
    assert [(s.ref.name, s.status.state) for s in listed] == [
        ("fine", RunState.SUCCEEDED),
        ("broken", RunState.UNREADABLE),
    ]
    broken = Run(backend.service, listed[1].ref)
    assert broken.state.state is RunState.UNREADABLE and STATE in broken.state.message
    assert broken.snapshot().path == tmp_path / "default" / "broken"
    for verb in (lambda: broken.wait(timeout=0), broken.logs, broken.cancel, broken.explain):
        with pytest.raises(ConfigError, match=STATE):
            verb()
    with pytest.raises(ConfigError, match=STATE):
        backend.get_run("broken")  # as a cluster's damaged record: why, at once
    backend.delete("broken")
    assert [s.ref.name for s in backend.runs()] == ["fine"]


def test_a_stale_handle_reads_and_cancels_nothing_of_a_later_submission(tmp_path: Path) -> None:
    run = _run(tmp_path, "train", GHOST, 0)
    backend = LocalBackend(run_dir=tmp_path)
    old = Run(backend.service, backend.get_run("train").ref)
    record = run.read()
    record.created += 1.0  # the name submitted again, as a submit replaces a finished run
    run.write(record)
    before = Path(run.file(STATE)).read_bytes()
    with pytest.raises(NotFoundError, match="replaced by a newer one"):
        _ = old.state
    assert old.cancel() is False
    assert Path(run.file(STATE)).read_bytes() == before and not run.cancel_requested
    assert backend.get_run("train").ref.submission == record.created


def test_wait_reports_each_transition_and_names_the_runs_still_going(tmp_path: Path) -> None:
    _run(tmp_path, "done", GHOST, 0)
    _live(tmp_path, "going")
    service = LocalBackend(run_dir=tmp_path).service
    done, going = (service.find(name).ref for name in ("done", "going"))
    seen: list[RunState] = []
    assert service.wait([done], None, lambda s: seen.append(s.state))[0].state is RunState.SUCCEEDED
    assert seen == [RunState.PENDING, RunState.RUNNING, RunState.SUCCEEDED]
    with pytest.raises(RunTimeoutError, match=r"runs still active after 0 s: going$"):
        service.wait([done, going], 0)
    with pytest.raises(RunTimeoutError, match=r"run 'going' is still Running after 0 s"):
        service.wait([going], 0)
    stop = threading.Event()
    stop.set()  # a follower that stopped reading: the wait ends with what is known
    states = service.wait([done, going], None, stop=stop)
    assert [s.state for s in states] == [RunState.SUCCEEDED, RunState.RUNNING]


def test_worker_logs_say_a_local_run_has_no_workers(tmp_path: Path) -> None:
    _run(tmp_path, "done", GHOST, 0)
    backend = LocalBackend(run_dir=tmp_path)
    run = Run(backend.service, backend.get_run("done").ref)
    with pytest.raises(ConfigError, match=r"no workers: read run\.logs\(\)"):
        run.worker_logs(object())
