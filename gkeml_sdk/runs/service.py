"""The port every backend implements for runs: `RunService`. A `Run` handle holds a service and
the `RunRef` of one submission, nothing else; every verb asks the service, which keeps all
per-run state and answers with frozen `RunSnapshot`s (submit, find and list too: the handle is
made from the snapshot's `ref`). So a backend never calls into a handle,
and two handles on one run never disagree.

Example:
    >>> from gkeml_sdk.runs.states import RunState, RunStatus
    >>> ref = RunRef("ft", "ml", submission=1765000000.0)
    >>> snap = RunSnapshot(ref, RunStatus(RunState.RUNNING), history=(), attempt=1)
    >>> snap.status.terminal, snap.counters.preemptions
    (False, 0)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gkeml_sdk.runs.states import RunCounters, RunStatus, Transition

if TYPE_CHECKING:
    from gkeml_sdk.runs.explain.explanation import Explanation
    from gkeml_sdk.runs.retry import RetryPolicy
    from gkeml_sdk.training.model import TrainingJob

ProgressCallback = Callable[[RunStatus], None]


@dataclass(frozen=True, slots=True)
class RunRef:
    """Which submission a handle names: a name is reused once its run ended, and a handle
    returned for one submission never reads or cancels a later one."""

    name: str
    namespace: str
    # When the submission was made (seconds since the epoch, as its record says); None: a
    # handle that follows whichever submission of the name is there.
    submission: float | None = None


@dataclass(frozen=True, slots=True)
class RunSnapshot:
    """What a backend knows about one run at one moment; a new one for every read."""

    ref: RunRef
    status: RunStatus
    history: tuple[Transition, ...]
    attempt: int
    counters: RunCounters = field(default_factory=RunCounters)
    # The MultiKueue worker cluster running the current attempt (None: here, or not yet).
    dispatched_to: str | None = None
    # Exit code of each process of the latest attempt, by slot (None while it runs); the
    # local backend knows them, a cluster's pods report them in their own status.
    exit_codes: Mapping[str, int | None] = field(default_factory=dict)
    # The local run directory (None on a cluster).
    path: Path | None = None


class RunService(Protocol):
    """What a backend does for runs. Every method takes the `RunRef` of a handle it returned."""

    def submit(self, job: TrainingJob, retry: RetryPolicy | None) -> RunSnapshot:
        """Start `job`; its submission as it is right after."""
        ...

    def list_runs(self) -> list[RunSnapshot]:
        """The runs of the service's namespace (or run directory), newest first; a run whose
        record cannot be read is listed UNREADABLE with why (its verbs raise that error)."""
        ...

    def find(self, name: str) -> RunSnapshot:
        """The current submission of the run called `name`; `NotFoundError` when none."""
        ...

    def snapshot(self, ref: RunRef, fresh: bool = True) -> RunSnapshot:
        """The run as it is now; with `fresh=False` what is known, reading the backend only
        when nothing was read yet (a history shown again costs no request)."""
        ...

    def worker_logs(self, ref: RunRef, worker: object, follow: bool = False) -> Iterator[str]:
        """Log lines of the run's pods on the MultiKueue worker cluster that `worker` (its
        settings) reaches; `ConfigError` for a backend without workers."""
        ...

    def wait(
        self,
        refs: Sequence[RunRef],
        timeout: float | None,
        progress: bool | ProgressCallback = False,
        stop: threading.Event | None = None,
    ) -> list[RunStatus]:
        """Block until each run is final (or `stop` is set); `RunTimeoutError` after
        `timeout` seconds."""
        ...

    def logs(
        self,
        ref: RunRef,
        follow: bool = False,
        stop: threading.Event | None = None,
        *,
        by_time: bool = False,
    ) -> Iterator[str]:
        """Log lines of every process/pod, prefixed by rank (`by_time`: merged in time order,
        each after its time); following ends with the run (or once `stop` is set)."""
        ...

    def cancel(self, ref: RunRef) -> bool:
        """Stop this submission: True when this call stopped it, False when it had ended."""
        ...

    def explain(self, ref: RunRef) -> Explanation:
        """Why the run is where it is."""
        ...
