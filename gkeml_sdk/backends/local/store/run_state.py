"""What a local run's `state.json` holds: its status, history, counters and processes, and
their JSON form (`run_store.RunDir` reads and writes the file)."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from gkeml_sdk.backends.local.system.json_fields import Fields, ShapeError
from gkeml_sdk.backends.local.system.procs import ProcessId
from gkeml_sdk.core.record_schema import SCHEMA_KEY, record_schema
from gkeml_sdk.runs.states import FailureCause, RunCounters, RunState, RunStatus, Transition

# The layout version of `state.json` (its `schema` field); 1 is also what a file written
# before it carried a schema holds.
STATE_SCHEMA = 1
# Where a run is before its supervisor has said anything.
PENDING = RunStatus(RunState.PENDING)


@dataclass(slots=True)
class ProcessRecord:
    """One started process: its slot label, identity and, once it ended, its exit code.

    Example:
        >>> ProcessRecord("0", 41, 7, attempt=1).id
        ProcessId(pid=41, start=7)
    """

    slot: str
    pid: int
    start: int
    attempt: int
    exit_code: int | None = None

    @property
    def id(self) -> ProcessId:
        """The process identity used to check and signal it."""
        return ProcessId(self.pid, self.start)


@dataclass(slots=True)
class LocalRunState:
    """Everything `state.json` holds about a run.

    Example:
        >>> record = LocalRunState("a", "default", created=0.0)
        >>> record.move(RunStatus(RunState.RUNNING, "Running"))
        >>> record.status.state, len(record.history), record.attempt
        (<RunState.RUNNING: 'Running'>, 1, 1)
    """

    name: str
    namespace: str
    created: float
    status: RunStatus = PENDING
    history: list[Transition] = field(default_factory=list)
    counters: RunCounters = field(default_factory=RunCounters)
    attempt: int = 1
    processes: list[ProcessRecord] = field(default_factory=list)
    finished: float | None = None

    def move(self, status: RunStatus, detail: str = "") -> None:
        """Record a transition (repeats of the same state and reason are not recorded)."""
        last = self.history[-1].status if self.history else None
        self.status = status
        if status.terminal and self.finished is None:
            self.finished = time.time()
        if last is not None and (last.state, last.reason) == (status.state, status.reason):
            return
        at = round(time.time() - self.created, 3)
        self.history.append(Transition(status, self.attempt, at, detail))

    def to_json(self) -> dict[str, Any]:
        """Plain data for `state.json`."""
        return {
            SCHEMA_KEY: STATE_SCHEMA,
            "name": self.name,
            "namespace": self.namespace,
            "created": self.created,
            "status": _status_out(self.status),
            "history": [
                {**_status_out(t.status), "attempt": t.attempt, "at": t.at, "detail": t.detail}
                for t in self.history
            ],
            "counters": {
                "preemptions": self.counters.preemptions,
                "disruptions": self.counters.disruptions,
                "user_restarts": self.counters.user_restarts,
                "resubmissions": self.counters.resubmissions,
                "extra": dict(self.counters.extra),
            },
            "attempt": self.attempt,
            "processes": [asdict(p) for p in self.processes],
            "finished": self.finished,
        }

    @classmethod
    def from_json(cls, data: object, where: str = "state.json") -> LocalRunState:
        """Read what `to_json` wrote (to the file `where`); data without `schema` (written
        before it carried one) reads as before, a newer schema is a `ConfigError`, and data
        that is not what gkeml writes a `ShapeError` naming the field."""
        record_schema(f"local run state {where}", data, STATE_SCHEMA)
        state = Fields(data, where)
        counters = state.nested("counters")
        return cls(
            name=state.text("name"),
            namespace=state.text("namespace"),
            created=state.number("created"),
            status=_status_in(state.nested("status")),
            history=[
                Transition(_status_in(t), t.whole("attempt"), t.number("at"), t.text("detail", ""))
                for t in state.objects("history")
            ],
            counters=RunCounters(
                preemptions=counters.whole("preemptions", 0),
                disruptions=counters.whole("disruptions", 0),
                user_restarts=counters.whole("user_restarts", 0),
                resubmissions=counters.whole("resubmissions", 0),
                extra=counters.whole_map("extra"),
            ),
            attempt=state.whole("attempt", 1),
            processes=[
                ProcessRecord(
                    p.text("slot"),
                    p.whole("pid"),
                    p.whole("start"),
                    p.whole("attempt"),
                    None if p.data.get("exit_code") is None else p.whole("exit_code"),
                )
                for p in state.objects("processes")
            ],
            finished=state.optional_number("finished"),
        )


def _status_out(status: RunStatus) -> dict[str, Any]:
    return {
        "state": status.state.value,
        "reason": status.reason,
        "message": status.message,
        "cause": None if status.cause is None else status.cause.value,
    }


def _status_in(status: Fields) -> RunStatus:
    cause = status.optional_text("cause")
    if status.data.get("state") == RunState.UNREADABLE.value:  # only ever a listing's word
        raise ShapeError(f"{status.where}: state {RunState.UNREADABLE.value!r} is never written")
    try:
        return RunStatus(
            RunState(status.text("state")),
            status.text("reason", ""),
            status.text("message", ""),
            None if cause is None else FailureCause(cause),
        )
    except ValueError as exc:  # a state or cause this gkeml does not know
        raise ShapeError(f"{status.where}: {exc}") from None
