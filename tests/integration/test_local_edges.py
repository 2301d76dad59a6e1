"""The local backend at its edges: cancel names its submission (True when it stopped the run,
False when it had finished or was replaced), readers never write or signal whatever a state
file names, delete and submit of one name never interleave, and a full disk never turns an
outcome that happened into a lost one. Outcomes are asserted, never how long anything took."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gkeml_sdk import GkemlError, RunState, TrainingJob
from gkeml_sdk.backends.local import LocalBackend, LocalOptions
from gkeml_sdk.backends.local.store.run_state import LocalRunState, ProcessRecord
from gkeml_sdk.backends.local.store.run_store import RESERVE, STATE, RunDir
from gkeml_sdk.backends.local.system.procs import ProcessId, alive
from gkeml_sdk.errors import ConfigError, NotFoundError
from gkeml_sdk.runs.handle import Run, RunStatus
from tests import local_runs

FAST = LocalOptions(grace_seconds=0.5)
ROOT = Path(__file__).resolve().parents[2]
SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]


def _until(condition: Callable[[], bool]) -> None:
    # An event, polled; the bound only turns a hang into a failure, it is no timing claim.
    deadline = time.monotonic() + 300
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.02)


def test_cancel_says_whether_it_stopped_the_run(tmp_path: Path) -> None:
    backend = LocalBackend(run_dir=tmp_path, options=FAST)
    live = local_runs.submit(backend, TrainingJob(name="live", command=SLEEP))
    _until(lambda: live.state.state is RunState.RUNNING)
    assert live.cancel() is True
    assert live.state.state is RunState.CANCELLED
    assert live.cancel() is False  # already finished: nothing changes
    done = local_runs.submit(backend, TrainingJob(name="done", command=["true"]))
    assert done.wait(timeout=120).state is RunState.SUCCEEDED
    before = (done.snapshot().path / STATE).read_bytes()
    assert done.cancel() is False
    assert (done.snapshot().path / STATE).read_bytes() == before


def test_a_stale_handle_never_cancels_a_newer_submission_of_its_name(tmp_path: Path) -> None:
    backend = LocalBackend(run_dir=tmp_path, options=FAST)
    old = local_runs.submit(backend, TrainingJob(name="train", command=["true"]))
    assert old.wait(timeout=120).state is RunState.SUCCEEDED
    new = local_runs.submit(backend, TrainingJob(name="train", command=SLEEP))
    _until(lambda: new.state.state is RunState.RUNNING)
    supervisor = RunDir(new.snapshot().path).read_supervisor()
    assert supervisor is not None
    before = (new.snapshot().path / STATE).read_bytes()
    assert old.cancel() is False
    assert alive(supervisor) and (new.snapshot().path / STATE).read_bytes() == before
    assert not (new.snapshot().path / "cancel").exists()
    with pytest.raises(NotFoundError, match="replaced by a newer one"):
        _ = old.state
    assert backend.get_run("train").status.state is RunState.RUNNING
    assert new.cancel() is True


def test_readers_never_write_or_signal_whatever_the_state_names(tmp_path: Path) -> None:
    # A process of someone else's, in a group of its own, named by a state.json whose start
    # time 0 would match any process on a pid-only check.
    bystander = subprocess.Popen(SLEEP, start_new_session=True)
    try:
        run = RunDir(tmp_path / "default" / "forged")
        Path(run.path).mkdir(parents=True)
        record = LocalRunState("forged", "default", created=1.0)
        record.move(RunStatus(RunState.RUNNING, "Running"))
        record.processes.append(ProcessRecord("0", bystander.pid, 0, 1))
        run.write(record)
        # Its supervisor: a process that has exited (a reaped child of ours).
        gone = subprocess.Popen(["true"])
        gone.wait()
        run.write_supervisor(ProcessId(gone.pid, 1))
        files = {p: p.read_bytes() for p in Path(run.path).iterdir()}
        backend = LocalBackend(run_dir=tmp_path)
        handle = local_runs.get_run(backend, "forged")
        assert handle.state.reason == "SupervisorLost"
        assert [r.status.reason for r in backend.runs()] == ["SupervisorLost"]
        assert handle.wait(timeout=0).state is RunState.FAILED
        assert handle.explain() is not None and handle.history and handle.exit_codes
        assert {p: p.read_bytes() for p in Path(run.path).iterdir()} == files
        assert bystander.poll() is None
        # Cancel and delete act, but only on processes gkeml can prove are its own.
        assert handle.cancel() is False
        backend.delete("forged")
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_delete_and_submit_of_one_name_never_interleave(tmp_path: Path) -> None:
    backend = LocalBackend(run_dir=tmp_path, options=FAST)
    outcomes: dict[str, list[str]] = {"submit": [], "delete": []}
    foreign: list[str] = []
    for _ in range(12):
        first = local_runs.submit(backend, TrainingJob(name="race", command=["true"]))
        first.wait(timeout=120)
        go = threading.Barrier(2)
        submitted: list[Run] = []

        def submit(go: threading.Barrier = go, submitted: list[Run] = submitted) -> None:
            go.wait()
            submitted.append(local_runs.submit(backend, TrainingJob(name="race", command=SLEEP)))

        def delete(go: threading.Barrier = go) -> None:
            go.wait()
            backend.delete("race")

        threads = {
            "submit": threading.Thread(target=_recording(submit, "submit", outcomes, foreign)),
            "delete": threading.Thread(target=_recording(delete, "delete", outcomes, foreign)),
        }
        for thread in threads.values():
            thread.start()
        for thread in threads.values():
            thread.join()
        path = tmp_path / "default" / "race"
        if path.exists():
            # The submit came second: its run is whole and running, never half removed.
            assert submitted and not submitted[0].state.terminal
            assert submitted[0].cancel() is True
            backend.delete("race")
        else:
            # The delete came second: it stopped the new run and removed all of it.
            assert not submitted or _gone(submitted[0])
    assert foreign == []
    assert outcomes["submit"] == ["ran"] * 12
    assert set(outcomes["delete"]) <= {"deleted"}


def _recording(
    call: Callable[[], None], what: str, outcomes: dict[str, list[str]], foreign: list[str]
) -> Callable[[], None]:
    def run() -> None:
        try:
            call()
            outcomes[what].append("ran" if what == "submit" else "deleted")
        except GkemlError as exc:
            outcomes[what].append(f"refused: {exc}")
        except Exception as exc:  # what the rounds count: anything not a gkeml error
            foreign.append(f"{what}: {type(exc).__name__}: {exc}")

    return run


def _gone(run: Run) -> bool:
    try:
        _ = run.state
    except NotFoundError:
        return True
    return False


# Fills the disk the run directory is on (its checkpoint folder), then exits 0 (printing
# nothing: its log is on that disk too).
FILL_DISK = textwrap.dedent(
    """
    import os
    path = os.path.join(os.environ["GKEML_CHECKPOINT_DIR"], "filler")
    with open(path, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"x" * 65536)
        except OSError:
            pass
        try:
            while True:
                out.write(b"x")
        except OSError:
            pass
    """
)


@contextlib.contextmanager
def small_disk(path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs at `path`; skips the test where this machine cannot mount one."""
    path.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        pytest.skip(f"cannot mount a small tmpfs here: no mount command ({exc.strerror})")
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_a_run_that_fills_the_disk_and_exits_0_reads_succeeded(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        backend = LocalBackend(run_dir=disk, options=FAST)
        run = local_runs.submit(backend, TrainingJob.from_code(FILL_DISK, name="fill"))
        # The disk is full when the process exits: its outcome is written in the room set aside.
        status = run.wait(timeout=120)
        assert (status.state, status.reason) == (RunState.SUCCEEDED, "Completed")
        assert run.exit_codes == {"0": 0}
        assert not (run.snapshot().path / RESERVE).exists()
        # While it stays full, a submit is one gkeml error naming the disk; nothing is left.
        with pytest.raises(ConfigError, match=r"the disk holding it is full \(No space left"):
            backend.submit(TrainingJob(name="next", command=["true"]))
        assert not (disk / "default" / "next").exists()
        assert [r.ref.name for r in backend.runs()] == ["fill"]
        # Space back: the first run still reads as it ended, and a submit runs.
        (local_runs.checkpoints_of(run) / "filler").unlink()
        assert run.state.state is RunState.SUCCEEDED
        again = local_runs.submit(backend, TrainingJob(name="next", command=["true"]))
        assert again.wait(timeout=120).state is RunState.SUCCEEDED


# Runs a supervisor in a process of its own, whose state writes fail with ENOSPC the first
# times it writes the outcome, as on a disk without room even for the reserve.
FULL_AT_THE_END = textwrap.dedent(
    """
    import errno, sys
    from gkeml_sdk import LocalOptions, TrainingJob
    from gkeml_sdk.backends.local.store import run_store
    from gkeml_sdk.backends.local.supervision import supervisor
    from gkeml_sdk.backends.local.store.run_files import write_run
    run = run_store.RunDir(sys.argv[1])
    write_run(TrainingJob(name="r", command=["true"]), "default", run, {}, LocalOptions())
    write = run_store.RunDir.write
    refused = []

    def full_disk(self, record):
        if record.status.terminal and len(refused) < 3:
            refused.append(record.status.state.value)
            raise OSError(errno.ENOSPC, "No space left on device")
        write(self, record)

    run_store.RunDir.write = full_disk
    supervisor.SAVE_RETRY_SECONDS = 0.01
    supervisor.Supervisor(run).supervise()
    print(len(refused), run.read().status.state.value, run.read().processes[0].exit_code)
    """
)


def test_an_outcome_the_disk_has_no_room_for_waits_in_the_supervisor(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-c", FULL_AT_THE_END, str(tmp_path / "default" / "r")],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    *retries, outcome = done.stdout.splitlines()
    assert outcome.split() == ["3", "Succeeded", "0"]
    assert retries == ["gkeml: cannot write state.json (No space left on device); retrying"] * 3
