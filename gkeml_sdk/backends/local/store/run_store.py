"""A local run on disk: the run directory's layout and its `state.json`, written atomically so
that readers in other processes (a restarted kernel, the CLI) never see half a file.

Layout of `<run root>/<namespace>/<name>/`:

    job.yaml        the TrainingJob (to_yaml)
    launch.json     the LaunchPlan: argv, working directory, each process's contract, limits
    state.json      status, history, counters, supervisor and process ids
    code/           the job's files (the working directory when there are any)
    checkpoints/    GKEML_CHECKPOINT_DIR; kept across restarts and preemptions
    logs/<slot>.log output of each process (node rank, or node.local_rank), all attempts
    logs/times      when each line of those logs arrived, in arrival order (`log_pump`)
    supervisor.json pid and start time of the detached supervisor
    supervisor.log  the supervisor's own errors
    cancel          present once a cancel was requested
    state.reserve   room set aside for writing state.json on a full disk, until the outcome

`state.json`, `launch.json` and `supervisor.json` each carry `schema` (the version of their
layout, constants below); one written before they carried it reads as before, and one of a
newer version is refused with a `ConfigError` saying to upgrade gkeml.

Directories are 0700 and files 0600 (code 0400) whatever the umask (`confined`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat

from gkeml_sdk.backends.local.plan.launch_plan import LaunchPlan
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.system.confined import FILE_MODE, open_private, write_private
from gkeml_sdk.backends.local.system.json_fields import (
    MAX_FILE_BYTES,
    Fields,
    ShapeError,
    parse_json,
)
from gkeml_sdk.backends.local.system.procs import ProcessId
from gkeml_sdk.core.record_schema import SCHEMA_KEY, record_schema
from gkeml_sdk.errors import ConfigError, NotFoundError, excerpt

STATE = "state.json"
JOB = "job.yaml"
LAUNCH = "launch.json"
CANCEL = "cancel"
SUPERVISOR_LOG = "supervisor.log"
SUPERVISOR = "supervisor.json"
# Room set aside at submit for the state writes of a run until its outcome is written: a full
# disk (filled by the run itself, often) must not turn an outcome that happened into a lost one.
RESERVE = "state.reserve"
RESERVE_BYTES = 64 * 1024
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
_ABSENT = object()  # what `_load` returns for a missing file (a file may hold JSON null)
# The layout version of each file (its `schema` field; state.json's is in run_state); 1 is also
# what a file written before they carried a schema holds. Launch 2: the plan made at submit (1
# held LocalOptions only); 3: its bootstrap (2 installed requirements before the command).
LAUNCH_SCHEMA = 3
SUPERVISOR_SCHEMA = 1


class UnreadableRunError(ConfigError):
    """A run file that is not what gkeml writes (damaged, or edited by hand or another tool)."""


class RunDir:
    """Paths of one run directory, as strings (`os.path`: pathlib would add to the supervisor's
    start), and atomic access to its state.

    Example:
        >>> d = RunDir("/tmp/runs/default/hello")
        >>> d.log_path("0"), d.name
        ('/tmp/runs/default/hello/logs/0.log', 'hello')
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.name = os.path.basename(self.path)
        self.code = os.path.join(self.path, "code")
        self.checkpoints = os.path.join(self.path, "checkpoints")
        self.logs = os.path.join(self.path, "logs")

    def file(self, name: str) -> str:
        """The path of the run directory's file `name` (`STATE`, `JOB`, `SUPERVISOR_LOG`...)."""
        return os.path.join(self.path, name)

    def log_path(self, slot: str) -> str:
        """Log file of the process in `slot`."""
        return os.path.join(self.logs, f"{slot}.log")

    @property
    def times_path(self) -> str:
        """The index of when each log line arrived (`log_pump`)."""
        return os.path.join(self.logs, "times")

    def log_paths(self) -> list[str]:
        """Every log file, in slot order (node rank, then local rank)."""
        try:
            names = os.listdir(self.logs)
        except (FileNotFoundError, NotADirectoryError):
            return []
        slots = sorted((n[: -len(".log")] for n in names if n.endswith(".log")), key=slot_key)
        return [self.log_path(slot) for slot in slots]

    def read(self) -> LocalRunState:
        """The run's state as last written; `NotFoundError` when the directory holds none
        (deleted, or being replaced), `UnreadableRunError` when it is damaged."""
        path = self.file(STATE)
        data = self._load(STATE)
        if data is _ABSENT:
            # Removed under us: deleted, or replaced by a new submission of the name.
            raise NotFoundError(
                f"read local run {self.name!r}",
                message=f"{self.path} no longer holds a run (deleted or being replaced)",
                hint="list the runs with Client(backend='local').runs()",
            )
        try:
            return LocalRunState.from_json(data, path)
        except ShapeError as exc:
            raise _damaged(path, str(exc)) from None

    def write(self, record: LocalRunState) -> None:
        """Replace `state.json` atomically (write a temporary file, then rename). On a full
        disk the space `reserve_space` set aside is given up for it; once the outcome is
        written the reserve goes."""
        text = json.dumps(record.to_json(), indent=1)
        try:
            write_atomic(self.file(STATE), text)
        except OSError as exc:
            if exc.errno not in _DISK_FULL or not self._release_reserve():
                raise
            write_atomic(self.file(STATE), text)
        if record.status.terminal:
            self._release_reserve()

    def reserve_space(self) -> None:
        """Set aside `RESERVE_BYTES` for the writes of `state.json` a full disk would refuse.
        Random bytes: zeros take no room on a compressing file system."""
        fd = open_private(self.file(RESERVE), os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(RESERVE_BYTES))

    def _release_reserve(self) -> bool:
        try:
            os.unlink(self.file(RESERVE))
        except FileNotFoundError:
            return False
        return True

    def read_launch(self) -> LaunchPlan:
        """What `write_launch` wrote (`schema` checked)."""
        path = self.file(LAUNCH)
        data = self._load(LAUNCH)
        if data is _ABSENT:
            raise _damaged(path, "it is missing")
        what = f"local run launch file {path}"
        found = record_schema(what, data, LAUNCH_SCHEMA)
        if found < LAUNCH_SCHEMA:
            # Only a supervisor reads it, started by the submit that wrote it.
            raise ConfigError(
                f"{what} has schema {found}: an older gkeml wrote it for its own supervisor; "
                "submit the job again to run it with this one"
            )
        try:
            return LaunchPlan.from_json(data, path)
        except ShapeError as exc:
            raise _damaged(path, str(exc)) from None

    def write_launch(self, plan: LaunchPlan) -> None:
        """Write `launch.json`: the plan the supervisor follows."""
        body = {SCHEMA_KEY: LAUNCH_SCHEMA, **plan.to_json()}
        write_atomic(self.file(LAUNCH), json.dumps(body, indent=1))

    def read_supervisor(self) -> ProcessId | None:
        """The supervisor's identity, written by its launcher; None before it started."""
        path = self.file(SUPERVISOR)
        data = self._load(SUPERVISOR)
        if data is _ABSENT:
            return None
        record_schema(f"local run supervisor file {path}", data, SUPERVISOR_SCHEMA)
        try:
            fields = Fields(data, path)
            proc = ProcessId(fields.whole("pid"), fields.whole("start"))
        except ShapeError as exc:
            raise _damaged(path, str(exc)) from None
        if proc.pid <= 0 or proc.start < 0:
            raise _damaged(path, f"pid {proc.pid}, start {proc.start} name no process")
        return proc

    def write_supervisor(self, proc: ProcessId) -> None:
        """Record the supervisor's identity (by the launcher, before submit returns)."""
        body = {SCHEMA_KEY: SUPERVISOR_SCHEMA, "pid": proc.pid, "start": proc.start}
        write_atomic(self.file(SUPERVISOR), json.dumps(body))

    def read_job(self) -> str:
        """The text of `job.yaml` (bounded, never through a link)."""
        raw = self._read_bytes(JOB)
        if raw is None:
            raise _damaged(self.file(JOB), "it is missing")
        if len(raw) > MAX_FILE_BYTES:
            raise _damaged(self.file(JOB), f"more than the {MAX_FILE_BYTES:,} bytes gkeml writes")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _damaged(self.file(JOB), f"it is no UTF-8 text ({exc.reason})") from None

    def _load(self, name: str) -> object:
        """The JSON of the run's file `name`; `_ABSENT` when the file is missing."""
        raw = self._read_bytes(name)
        if raw is None:
            return _ABSENT
        try:
            return parse_json(raw)
        except ShapeError as exc:
            raise _damaged(self.file(name), str(exc)) from None

    def _read_bytes(self, name: str) -> bytes | None:
        """The run's file `name`, at most `MAX_FILE_BYTES` + 1 bytes of it, never through a
        link or from anything but a regular file; None when it is missing."""
        path = self.file(name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise _damaged(path, exc.strerror or str(exc)) from None
        try:
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise _damaged(path, "it is no regular file")
                return fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise _damaged(path, exc.strerror or str(exc)) from None

    @property
    def holds_state(self) -> bool:
        """True when the directory has a `state.json`, readable or not (a damaged one, even a
        directory or a link in its place, still marks a run: one to list and to delete)."""
        return os.path.lexists(self.file(STATE))

    @property
    def cancel_requested(self) -> bool:
        """True once `cancel()` asked the run to stop."""
        return os.path.exists(self.file(CANCEL))

    def request_cancel(self) -> None:
        """Leave the marker that tells the supervisor a stop is a cancel."""
        write_private(self.file(CANCEL), "")


def _damaged(path: str, why: str) -> UnreadableRunError:
    return UnreadableRunError(
        f"cannot read the local run file {excerpt(path)}: {excerpt(why)}. It was damaged or "
        "edited by hand; delete the run (Client(backend='local').delete(name)) and submit it again"
    )


def write_atomic(path: str, text: str) -> None:
    """Write `text` to `path` so that readers see the old or the new file, never a part."""
    # As tempfile.mkstemp makes it (a new private file of a random name), without the import.
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}")
    new_file = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, new_file, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # private whatever the umask; the rename keeps the mode
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def slot_key(stem: str) -> tuple[int, ...]:
    """The order of slots: by node rank, then local rank.

    Example:
        >>> sorted(["10", "2", "0.3", "0.10"], key=slot_key)
        ['0.3', '0.10', '2', '10']
    """
    try:
        return tuple(int(part) for part in stem.split("."))
    except ValueError:
        return (1 << 30,)
