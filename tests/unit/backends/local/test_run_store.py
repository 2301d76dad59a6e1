"""state.json round trips and atomic writes."""

from __future__ import annotations

from pathlib import Path

from gkeml_sdk.backends.local.run_store import ProcessRecord, RunDir, RunRecord, write_atomic
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus


def test_record_round_trip(tmp_path: Path) -> None:
    record = RunRecord("r", "ns", 100.0)
    record.move(RunStatus(RunState.RUNNING, "Running"))
    record.move(RunStatus(RunState.RUNNING, "Running", "same state and reason"))
    record.attempt = 2
    record.counters.preemptions = 1
    record.processes.append(ProcessRecord("0", 123, 456, 2, exit_code=None))
    record.move(RunStatus(RunState.FAILED, "ReachedMaxRestarts", "x", FailureCause.USER_CODE))
    run = RunDir(tmp_path)
    run.write(record)
    back = run.read()
    assert back == record
    assert [t.status.state for t in back.history] == [RunState.RUNNING, RunState.FAILED]
    assert back.history[-1].attempt == 2
    assert back.finished is not None


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_log_paths_sorted_by_rank(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    run.logs.mkdir()
    for slot in ("10", "2", "1.1", "1.0"):
        run.log_path(slot).touch()
    assert [p.stem for p in run.log_paths()] == ["1.0", "1.1", "2", "10"]
