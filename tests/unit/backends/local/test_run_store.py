"""state.json round trips and atomic writes; the run directory's JSON files carry a schema,
and those written before they did keep loading (launch.json, read only by the supervisor its
submit started, is refused with what to do)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gkeml_sdk import TrainingJob
from gkeml_sdk.backends.local.local_backend import LocalBackend
from gkeml_sdk.backends.local.plan.launch_plan import plan_launch
from gkeml_sdk.backends.local.plan.local_options import LocalOptions
from gkeml_sdk.backends.local.store.run_state import STATE_SCHEMA, LocalRunState, ProcessRecord
from gkeml_sdk.backends.local.store.run_store import (
    LAUNCH,
    LAUNCH_SCHEMA,
    STATE,
    SUPERVISOR,
    SUPERVISOR_SCHEMA,
    RunDir,
    write_atomic,
)
from gkeml_sdk.backends.local.system.procs import ProcessId
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus
from gkeml_sdk.version import __version__


def test_record_round_trip(tmp_path: Path) -> None:
    record = LocalRunState("r", "ns", 100.0)
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
    (tmp_path / "logs").mkdir()
    for slot in ("10", "2", "1.1", "1.0"):
        Path(run.log_path(slot)).touch()
    (tmp_path / "logs" / "notes.txt").touch()  # no log: not listed
    assert [Path(p).stem for p in run.log_paths()] == ["1.0", "1.1", "2", "10"]


# state.json as the SDK wrote it before records carried a schema (RunRecord.to_json at
# 7635333: a run with one transition and one process).
UNVERSIONED_STATE = """{
 "name": "hello",
 "namespace": "default",
 "created": 1767225600.25,
 "status": {
  "state": "Running",
  "reason": "Running",
  "message": "1 process(es)",
  "cause": null
 },
 "history": [
  {
   "state": "Running",
   "reason": "Running",
   "message": "1 process(es)",
   "cause": null,
   "attempt": 1,
   "at": 1.5,
   "detail": ""
  }
 ],
 "counters": {
  "preemptions": 0,
  "disruptions": 0,
  "user_restarts": 0,
  "resubmissions": 0,
  "extra": {}
 },
 "attempt": 1,
 "processes": [
  {
   "slot": "0",
   "pid": 4242,
   "start": 987654,
   "attempt": 1,
   "exit_code": null
  }
 ],
 "finished": null
}"""
# launch.json and supervisor.json as LocalBackend.submit and the launcher wrote them then.
UNVERSIONED_LAUNCH = """{
 "argv": ["/usr/bin/python3", "train.py"],
 "cwd": "/tmp/runs/default/hello/code",
 "options": {"chaos_after": 2.0, "chaos_times": 1, "spawn_procs": false, "grace_seconds": null},
 "volumes": {}
}"""
UNVERSIONED_SUPERVISOR = '{"pid": 4243, "start": 987655}'


def test_state_written_before_schemas_loads_as_before(tmp_path: Path) -> None:
    (tmp_path / STATE).write_text(UNVERSIONED_STATE)
    record = RunDir(tmp_path).read()
    assert (record.name, record.namespace, record.created) == ("hello", "default", 1767225600.25)
    assert record.status == RunStatus(RunState.RUNNING, "Running", "1 process(es)")
    assert [(t.status.state, t.attempt, t.at) for t in record.history] == [
        (RunState.RUNNING, 1, 1.5)
    ]
    assert record.processes == [ProcessRecord("0", 4242, 987654, 1)]
    assert record.finished is None


def test_state_carries_its_schema_and_round_trips(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    record = LocalRunState("r", "ns", 100.0)
    run.write(record)
    assert json.loads((tmp_path / STATE).read_text())["schema"] == STATE_SCHEMA == 1
    assert run.read() == record


def test_supervisor_file_written_before_schemas_loads(tmp_path: Path) -> None:
    (tmp_path / SUPERVISOR).write_text(UNVERSIONED_SUPERVISOR)
    assert RunDir(tmp_path).read_supervisor() == ProcessId(4243, 987655)


def test_a_launch_file_of_schema_1_is_refused_saying_to_submit_again(tmp_path: Path) -> None:
    # Schema 1 held LocalOptions only: its supervisor read the TrainingJob, this one does not.
    (tmp_path / LAUNCH).write_text(UNVERSIONED_LAUNCH)
    with pytest.raises(ConfigError) as refused:
        RunDir(tmp_path).read_launch()
    assert str(refused.value) == (
        f"local run launch file {tmp_path / LAUNCH} has schema 1: an older gkeml wrote it for "
        "its own supervisor; submit the job again to run it with this one"
    )


def test_launch_and_supervisor_files_carry_their_schema(tmp_path: Path) -> None:
    run = RunDir(tmp_path)
    job = TrainingJob(name="a", command=["x"], nodes=2, max_restarts=2, env={"A": "1"})
    plan = plan_launch(
        job, LocalOptions(chaos_after=2.0), argv=["x"], cwd="/", volumes={}, checkpoint_dir="/c"
    )
    run.write_launch(plan)
    run.write_supervisor(ProcessId(7, 8))
    assert json.loads((tmp_path / LAUNCH).read_text())["schema"] == LAUNCH_SCHEMA == 3
    assert json.loads((tmp_path / SUPERVISOR).read_text())["schema"] == SUPERVISOR_SCHEMA == 1
    assert run.read_launch() == plan
    assert (plan.max_restarts, plan.env, plan.chaos_after, plan.chaos_times) == (
        2,
        {"A": "1"},
        2.0,
        1,
    )
    assert run.read_supervisor() == ProcessId(7, 8)


@pytest.mark.parametrize(
    ("file", "what", "read", "current"),
    [
        (STATE, "local run state", RunDir.read, STATE_SCHEMA),
        (LAUNCH, "local run launch file", RunDir.read_launch, LAUNCH_SCHEMA),
        (SUPERVISOR, "local run supervisor file", RunDir.read_supervisor, SUPERVISOR_SCHEMA),
    ],
)
def test_a_file_of_a_newer_schema_is_refused_with_the_fix(
    tmp_path: Path, file: str, what: str, read: Callable[[RunDir], object], current: int
) -> None:
    # A newer layout may lack every field this SDK knows: only the schema is looked at.
    (tmp_path / file).write_text(f'{{"schema": {current + 1}, "renamed": true}}')
    with pytest.raises(ConfigError) as refused:
        read(RunDir(tmp_path))
    assert str(refused.value) == (
        f"{what} {tmp_path / file} has schema {current + 1}, but gkeml {__version__} reads "
        f"schema {current} (and records written without one): a newer gkeml wrote it. "
        "Upgrade gkeml (pip install -U gkeml) to read it"
    )


def test_state_of_an_unknown_older_schema_is_refused(tmp_path: Path) -> None:
    (tmp_path / STATE).write_text('{"schema": 0, "name": "hello"}')
    with pytest.raises(ConfigError, match=r"state .* has schema 0, an older layout than any"):
        RunDir(tmp_path).read()


def test_listing_local_runs_shows_a_run_of_a_newer_schema_as_unreadable(tmp_path: Path) -> None:
    for name in ("hello", "other"):
        (tmp_path / "default" / name).mkdir(parents=True)
        (tmp_path / "default" / name / STATE).write_text(UNVERSIONED_STATE)
    backend = LocalBackend(run_dir=tmp_path)
    assert sorted(r.ref.name for r in backend.runs()) == ["hello", "other"]
    (tmp_path / "default" / "hello" / STATE).write_text('{"schema": 2}')
    listed = {r.ref.name: r.status for r in backend.runs()}
    assert listed["other"].state is not RunState.UNREADABLE
    assert listed["hello"].state is RunState.UNREADABLE
    assert "Upgrade gkeml" in listed["hello"].message


def test_a_state_file_that_is_no_mapping_is_refused_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / STATE).write_text("[1, 2]")
    with pytest.raises(ConfigError, match=r"state .* is not a mapping of fields but list"):
        RunDir(tmp_path).read()
