"""A fuzz of damaged local run files: every file of a run directory, each damaged in every way
(truncated, of the wrong JSON type, of the wrong shape, from a newer gkeml, nested too deep,
binary, too big, replaced by a directory, a FIFO or a link to /dev/zero). Whatever the damage,
the store lists its other runs, lists the damaged one as UNREADABLE (or with its state, when
the damaged file is none its state is read from), never lets a foreign exception out of a
handle, and deletes the damaged run. No supervisor runs here: the runs are as a supervisor
leaves them when it dies, with process ids no process can have."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gkeml_sdk import TrainingJob
from gkeml_sdk.backends.local.local_backend import LocalBackend
from gkeml_sdk.backends.local.plan.local_options import LocalOptions
from gkeml_sdk.backends.local.store.run_files import write_run
from gkeml_sdk.backends.local.store.run_state import ProcessRecord
from gkeml_sdk.backends.local.store.run_store import (
    CANCEL,
    JOB,
    LAUNCH,
    STATE,
    SUPERVISOR,
    SUPERVISOR_LOG,
    RunDir,
)
from gkeml_sdk.backends.local.system.procs import ProcessId
from gkeml_sdk.errors import GkemlError
from gkeml_sdk.runs.handle import RunState, RunStatus
from tests.local_runs import get_run, runs

# No process ever has a pid above the kernel's limit: signalling these reaches nobody.
_PID_MAX = int(Path("/proc/sys/kernel/pid_max").read_text()) if Path("/proc").is_dir() else 99999
GHOST = ProcessId(_PID_MAX + 7, 12345)

Damage = Callable[[Path], None]


def _rewrite(change: Callable[[bytes], bytes]) -> Damage:
    def damage(path: Path) -> None:
        path.write_bytes(change(path.read_bytes()))

    return damage


_DROP = object()  # a field value that `_json_edit` leaves out


def _json_edit(change: Callable[[dict[str, object]], object]) -> Damage:
    def damage(path: Path) -> None:
        data = change(json.loads(path.read_text()))
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if v is not _DROP}
        path.write_text(json.dumps(data))

    return damage


def _replace_with_dir(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link_to_dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


DEEP = b"[" * 200_000 + b"]" * 200_000
# Damage to any file.
ANY_FILE: dict[str, Damage] = {
    "empty": _rewrite(lambda raw: b""),
    "truncated": _rewrite(lambda raw: raw[: len(raw) // 2]),
    "one byte": _rewrite(lambda raw: raw[:1]),
    "list": _rewrite(lambda raw: b"[]"),
    "null": _rewrite(lambda raw: b"null"),
    "string": _rewrite(lambda raw: b'"state"'),
    "number": _rewrite(lambda raw: b"7"),
    "deep": _rewrite(lambda raw: DEEP),
    "deep value": _rewrite(lambda raw: b'{"schema": 1, "name": ' + DEEP + b"}"),
    "binary": _rewrite(lambda raw: bytes(range(256)) * 4),
    "not utf-8": _rewrite(lambda raw: raw.replace(b'"', b'"\xff', 1)),
    "huge number": _rewrite(lambda raw: b'{"schema": 1, "created": ' + b"9" * 5000 + b"}"),
    "too big": _rewrite(lambda raw: b" " * (9 * 1024 * 1024) + raw),
    "directory": _replace_with_dir,
    "fifo": _replace_with_fifo,
    "link to /dev/zero": _link_to_dev_zero,
}
# Damage to a JSON file gkeml wrote: a newer schema, each field of the wrong type, each field
# without a default missing.
JSON_FILE: dict[str, Damage] = {
    "future schema": _json_edit(lambda d: {**d, "schema": 99}),
    "schema not a number": _json_edit(lambda d: {**d, "schema": [1]}),
}


def _field_damage(required: tuple[str, ...], optional: tuple[str, ...]) -> dict[str, Damage]:
    found: dict[str, Damage] = {}
    for key in required + optional:
        found[f"{key} wrong type"] = _json_edit(lambda d, k=key: {**d, k: [{"x": None}]})
    for key in required:
        found[f"{key} missing"] = _json_edit(lambda d, k=key: {**d, k: _DROP})
    return found


STATE_FIELDS = _field_damage(
    ("name", "namespace", "created", "status"),
    ("history", "counters", "attempt", "processes", "finished"),
)
SUPERVISOR_FIELDS = _field_damage(("pid", "start"), ())
LAUNCH_FIELDS = _field_damage(
    ("argv", "cwd", "slots", "gang", "max_restarts", "grace_seconds", "chaos_times"),
    ("env", "secret_names", "max_runtime", "chaos_after"),
)
# Damage inside state.json's nested parts.
STATE_PARTS: dict[str, Damage] = {
    "null history entry": _json_edit(lambda d: {**d, "history": [None]}),
    "unknown state": _json_edit(lambda d: {**d, "status": {"state": "Exploded"}}),
    "unreadable state": _json_edit(lambda d: {**d, "status": {"state": "Unreadable"}}),
    "unknown cause": _json_edit(
        lambda d: {**d, "status": {"state": "Failed", "cause": "Cosmic rays"}}
    ),
    "process pid a string": _json_edit(lambda d: {**d, "processes": [{"pid": "1", "slot": "0"}]}),
    "counter not a number": _json_edit(lambda d: {**d, "counters": {"preemptions": "many"}}),
    "extra counter a list": _json_edit(lambda d: {**d, "counters": {"extra": {"a": []}}}),
    "created infinite": _rewrite(
        lambda raw: raw.replace(b'"created": ', b'"created": 1e999, "x": ', 1)
    ),
}
YAML_FILE: dict[str, Damage] = {
    "wrong field type": _rewrite(lambda raw: raw + b"\nnodes: [many]\n"),
    "unknown field": _rewrite(lambda raw: raw + b"\nexploded: true\n"),
    "yaml deep": _rewrite(lambda raw: b"[" * 100_000),
}

FILES: dict[str, dict[str, Damage]] = {
    STATE: {**ANY_FILE, **JSON_FILE, **STATE_FIELDS, **STATE_PARTS},
    SUPERVISOR: {
        **ANY_FILE,
        **JSON_FILE,
        **SUPERVISOR_FIELDS,
        "negative pid": _json_edit(lambda d: {**d, "pid": -1}),
        "pid zero": _json_edit(lambda d: {**d, "pid": 0}),
    },
    LAUNCH: {**ANY_FILE, **JSON_FILE, **LAUNCH_FIELDS},
    JOB: {**ANY_FILE, **YAML_FILE},
    CANCEL: {"binary": _rewrite(lambda raw: bytes(range(256))), "directory": _replace_with_dir},
    SUPERVISOR_LOG: {k: ANY_FILE[k] for k in ("binary", "directory", "link to /dev/zero")},
    "logs/0.log": {k: ANY_FILE[k] for k in ("binary", "not utf-8", "directory")},
    "code/main.py": {k: ANY_FILE[k] for k in ("binary", "empty", "directory")},
}
# The files a run's state is read from: damaged, the run is listed UNREADABLE.
STATE_FILES = (STATE, SUPERVISOR)
CASES = [(file, damage) for file, damages in FILES.items() for damage in damages]


def _lost_run(root: Path, name: str) -> RunDir:
    """A run as a supervisor leaves it when killed: RUNNING, one process without exit code."""
    job = TrainingJob.from_code("print('hi')\n", name=name)
    run = RunDir(root / "default" / name)
    record = write_run(job, "default", run, {}, LocalOptions())
    record.move(RunStatus(RunState.RUNNING, "Running", "1 process(es)"))
    record.processes.append(ProcessRecord("0", GHOST.pid, GHOST.start, 1))
    run.write(record)
    run.write_supervisor(GHOST)
    Path(run.log_path("0")).write_text("hello\n")
    Path(run.file(SUPERVISOR_LOG)).write_text("")
    return run


def _foreign(call: Callable[[], object], what: str, found: list[str]) -> object:
    try:
        return call()
    except GkemlError:
        return None
    except Exception as exc:  # the point of the fuzz: anything not a gkeml error is a finding
        found.append(f"{what}: {type(exc).__name__}: {str(exc)[:200]}")
        return None


@pytest.mark.parametrize(("file", "damage"), CASES, ids=[f"{f}-{d}" for f, d in CASES])
def test_one_damaged_file_fails_alone_and_the_run_can_be_deleted(
    tmp_path: Path, file: str, damage: str
) -> None:
    for name in ("before", "damaged", "after"):
        _lost_run(tmp_path, name)
    if file == CANCEL:
        (tmp_path / "default" / "damaged" / CANCEL).write_text("")
    FILES[file][damage](tmp_path / "default" / "damaged" / file)
    backend = LocalBackend(run_dir=tmp_path)
    foreign: list[str] = []

    listed = _foreign(lambda: {r.ref.name: r.status for r in backend.runs()}, "runs()", foreign)
    assert isinstance(listed, dict), foreign
    assert sorted(listed) == ["after", "before", "damaged"]
    for name in ("before", "after"):
        assert listed[name].state is RunState.FAILED  # SupervisorLost, read as before
    if file in STATE_FILES:
        assert listed["damaged"].state is RunState.UNREADABLE
        assert file in listed["damaged"].message
    else:
        assert listed["damaged"].state in (RunState.FAILED, RunState.CANCELLED)

    # The handle the listing gave (its state says UNREADABLE, its verbs raise why), and the
    # one get_run gives (which raises why when the state cannot be read).
    handles = [h for h in runs(backend) if h.name == "damaged"]
    found = _foreign(lambda: get_run(backend, "damaged"), "get_run", foreign)
    if file in STATE_FILES:
        assert found is None and handles[0].state.state is RunState.UNREADABLE
    else:
        handles.append(found)  # type: ignore[arg-type]
    for run in handles:
        reads: dict[str, Callable[[], object]] = {
            "state": lambda run=run: run.state,
            "history": lambda run=run: run.history,
            "counters": lambda run=run: run.counters,
            "attempt": lambda run=run: run.attempt,
            "exit_codes": lambda run=run: run.exit_codes,
            "explain": run.explain,
            "job": lambda run=run: backend.service.job(run.ref),
            "logs": lambda run=run: list(run.logs()),
            "wait": lambda run=run: run.wait(timeout=0),
        }
        for what, read in reads.items():
            _foreign(read, what, foreign)
    _foreign(lambda: backend.delete("damaged"), "delete", foreign)
    assert foreign == []
    assert not (tmp_path / "default" / "damaged").exists()
    assert sorted(r.ref.name for r in backend.runs()) == ["after", "before"]
