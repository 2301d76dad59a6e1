"""Where a run is and what it went through: the state enum, statuses, history entries and
counters every backend reports (`gkeml_sdk.runs.handle` exports them with the run handle).
Light to import: a local run's supervisor records them without the handle's threads.

Example:
    >>> from gkeml_sdk.runs.states import RunState, RunStatus
    >>> RunStatus(RunState.QUEUED, reason="Pending", message="waiting for quota").terminal
    False
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class RunState(enum.Enum):
    """Where a run is. Terminal states: SUCCEEDED, FAILED, CANCELLED."""

    PENDING = "Pending"
    QUEUED = "Queued"
    WAITING_FOR_CAPACITY = "WaitingForCapacity"
    STARTING = "Starting"
    RUNNING = "Running"
    PREEMPTED = "Preempted"
    RESTARTING = "Restarting"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    CANCELLED = "Cancelled"
    # Its record cannot be read (damaged, another tool's, or a newer gkeml's): gkeml does not
    # know where it is and leaves its objects alone.
    UNREADABLE = "Unreadable"

    @property
    def terminal(self) -> bool:
        """True for states a run never leaves."""
        return self in (RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED)


class FailureCause(enum.Enum):
    """Why a FAILED run failed; decides whether a resubmission can help."""

    USER_CODE = "UserCode"
    INFRASTRUCTURE = "Infrastructure"
    DEACTIVATED = "DeactivatedByPolicy"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class RunStatus:
    """A state with Kueue's (or the backend's) reason and message.

    Example:
        >>> s = RunStatus(RunState.FAILED, "BackoffLimitExceeded", "exit 1", FailureCause.USER_CODE)
        >>> str(s)
        'Failed (UserCode): BackoffLimitExceeded: exit 1'
        >>> str(RunStatus(RunState.RUNNING, "Running", "2 process(es)"))
        'Running: 2 process(es)'
    """

    state: RunState
    reason: str = ""
    message: str = ""
    cause: FailureCause | None = None

    @property
    def terminal(self) -> bool:
        """True when the run will not change any more."""
        return self.state.terminal

    def __str__(self) -> str:
        head = self.state.value
        if self.cause is not None:
            head += f" ({self.cause.value})"
        # A reason that repeats the state ("Running: Running: ...") says nothing new.
        reason = "" if self.reason == self.state.value else self.reason
        tail = ": ".join(part for part in (reason, self.message) if part)
        return f"{head}: {tail}" if tail else head


@dataclass(frozen=True, slots=True)
class Transition:
    """One entry of a run's history: the status it moved to, when, in which attempt, and the
    key saying what it records (see `gkeml_sdk.runs.history`), so re-reading adds nothing.

    Example:
        >>> Transition(RunStatus(RunState.RUNNING), attempt=2).at
        0.0
    """

    status: RunStatus
    attempt: int = 1
    at: float = 0.0  # seconds since the run was first submitted
    detail: str = ""
    key: str = ""


@dataclass(slots=True)
class RunCounters:
    """Counts a run accumulates across attempts, read from Kueue and JobSet status: Kueue
    preemptions (`schedulingStats`), Spot/node disruptions (restarts JobSet did not count
    against `max_restarts`, or disrupted pods), user-code restarts, resubmissions.

    Example:
        >>> RunCounters(preemptions=1)
        RunCounters(preemptions=1, disruptions=0, user_restarts=0, resubmissions=0, extra={})
    """

    preemptions: int = 0
    disruptions: int = 0
    user_restarts: int = 0
    resubmissions: int = 0
    extra: dict[str, int] = field(default_factory=dict)
