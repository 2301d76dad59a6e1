"""The run handle every backend returns: one state enum, one history, one interface (the
states, statuses and counters are defined in `gkeml_sdk.runs.states`), and runs drawn in a
notebook (one run as its timeline, several as a table).

Example:
    >>> from gkeml_sdk.runs.handle import RunState, RunStatus
    >>> RunStatus(RunState.QUEUED, reason="Pending", message="waiting for quota").terminal
    False
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gkeml_sdk.errors import RunTimeoutError
from gkeml_sdk.runs.log_lines import log_prefix, log_slot
from gkeml_sdk.runs.service import ProgressCallback, RunRef, RunService, RunSnapshot
from gkeml_sdk.runs.states import FailureCause, RunCounters, RunState, RunStatus, Transition

if TYPE_CHECKING:
    from gkeml_sdk.runs.explain.explanation import Explanation

__all__ = [
    "FailureCause",
    "ProgressCallback",
    "Run",
    "RunCounters",
    "RunRef",
    "RunSnapshot",
    "RunState",
    "RunStatus",
    "Transition",
]


class Run:
    """A submitted run. `Client(...).submit(job)` returns one for every backend.

    It holds the backend's `RunService` and the `RunRef` of its submission; every property and
    verb asks the service (each read is a fresh `RunSnapshot`).

    Example:
        >>> from gkeml_sdk import Client, TrainingJob  # doctest: +SKIP
        >>> job = TrainingJob(name="t", command=["true"])  # doctest: +SKIP
        >>> run = Client(backend="local").submit(job)  # doctest: +SKIP
        >>> run.wait().state  # doctest: +SKIP
        <RunState.SUCCEEDED: 'Succeeded'>
    """

    def __init__(self, service: RunService, ref: RunRef) -> None:
        self._service, self._ref = service, ref

    @property
    def name(self) -> str:
        """The run's name (its job's)."""
        return self._ref.name

    @property
    def namespace(self) -> str:
        """The namespace (on the local backend: the run directory's namespace folder)."""
        return self._ref.namespace

    @property
    def ref(self) -> RunRef:
        """Which submission this handle names."""
        return self._ref

    def snapshot(self, fresh: bool = True) -> RunSnapshot:
        """Everything known about the run now, read once (`state`, `history`, ... each read
        again); `fresh=False`: what is known, reading only a run never read.

        Example:
            >>> snap = Client().get_run("llama-ft").snapshot()  # doctest: +SKIP
            >>> snap.status.state, snap.attempt  # doctest: +SKIP
            (<RunState.RUNNING: 'Running'>, 2)
        """
        return self._service.snapshot(self._ref, fresh)

    @property
    def state(self) -> RunStatus:
        """The current status (read from the backend now)."""
        return self.snapshot().status

    @property
    def history(self) -> list[Transition]:
        """Every transition across all attempts, oldest first (what is known: the backend is
        read only when this run was never read)."""
        return list(self.snapshot(fresh=False).history)

    @property
    def counters(self) -> RunCounters:
        """Preemptions, disruptions, user-code restarts and resubmissions so far."""
        return self.snapshot().counters

    @property
    def attempt(self) -> int:
        """The current attempt (1 until a resubmission, a local restart or preemption)."""
        return self.snapshot().attempt

    @property
    def preemptions(self) -> int:
        """Preemptions so far, across attempts."""
        return self.counters.preemptions

    @property
    def dispatched_to(self) -> str | None:
        """The MultiKueue worker cluster running the current attempt (None: it runs here, or
        no worker admitted it yet; always None locally)."""
        return self.snapshot().dispatched_to

    @property
    def exit_codes(self) -> dict[str, int | None]:
        """Exit code of each process of the latest attempt, by slot (None while it runs)."""
        return dict(self.snapshot().exit_codes)

    def wait(
        self, timeout: float | None = None, progress: bool | ProgressCallback = False
    ) -> RunStatus:
        """Block until the run is terminal; raise `RunTimeoutError` after `timeout` seconds.
        `progress=True` shows each transition; a callable receives each new status."""
        return self._service.wait([self._ref], timeout, progress)[0]

    def logs(self, follow: bool = False, *, by_time: bool = False) -> Iterator[str]:
        """Log lines of every process/pod of the run, prefixed by node rank, process after
        process; `by_time=True` merges them in time order, each line after its time (RFC 3339,
        UTC, nanoseconds; lines of one time in rank order). `follow=True` keeps yielding new
        lines until the run ends.

        Example:
            >>> for line in run.logs(by_time=True):  # doctest: +SKIP
            ...     print(line)
            2026-12-07T19:53:25.120000000Z [0] step 1
            2026-12-07T19:53:25.310000000Z [1] step 1
        """
        return self._service.logs(self._ref, follow, by_time=by_time)

    def cancel(self) -> bool:
        """Stop this submission of the run and everything it started: True when this call
        stopped it, False when it had already finished (nothing is changed then)."""
        return self._service.cancel(self._ref)

    def explain(self) -> Explanation:
        """Why the run is where it is: one sentence (cause, next action), category, evidence."""
        return self._service.explain(self._ref)

    def worker_logs(self, worker: object, follow: bool = False) -> Iterator[str]:
        """Log lines of the current attempt's pods on the MultiKueue worker it was dispatched
        to (`dispatched_to`); `worker` reaches that cluster (its `KubernetesSettings`, e.g. a
        kubeconfig context).

        Example:
            >>> run.worker_logs(KubernetesSettings(context="worker-1"))  # doctest: +SKIP
        """
        return self._service.worker_logs(self._ref, worker, follow)

    def follow(self, timeout: float | None = None) -> Iterator[str | RunStatus]:
        """Log lines (`str`, prefixed by rank) and each new `RunStatus` as one stream, until
        the run is terminal and its logs are drained; every transition of its history is
        yielded, so a brief PREEMPTED is not missed. Raises `RunTimeoutError` after `timeout`
        seconds (the run keeps going). Costs no polling: statuses come from `wait`.

        Example:
            >>> from gkeml_sdk import Client, RunStatus  # doctest: +SKIP
            >>> run = Client(backend="local").get_run("hello")  # doctest: +SKIP
            >>> for item in run.follow(timeout=600):  # doctest: +SKIP
            ...     print(f"status: {item}" if isinstance(item, RunStatus) else item)
        """
        items: queue.Queue[object] = queue.Queue()
        stop = threading.Event()  # set once the caller stops reading: helpers close their watches
        _start(f"gkeml-logs-{self.name}", lambda: _read_logs(self, items, stop))
        _start(f"gkeml-status-{self.name}", lambda: _wait(self, timeout, items, stop))
        try:
            yield from self._follow_items(items, timeout)
        finally:
            stop.set()

    def _follow_items(
        self, items: queue.Queue[object], timeout: float | None
    ) -> Iterator[str | RunStatus]:
        end = None if timeout is None else time.monotonic() + timeout
        shown: list[RunStatus] = []  # statuses yielded so far
        seen = 0  # history entries read so far
        final: RunStatus | None = None
        logs_done = False
        item: object = _WAKE
        while True:
            if item is _WAKE or isinstance(item, _Final):
                history = self.history  # only when a transition was reported: a local file read
                for transition in history[seen:]:
                    if not shown or transition.status != shown[-1]:
                        shown.append(transition.status)
                        yield transition.status
                seen = len(history)
            if isinstance(item, _Line):
                yield item.text
            elif isinstance(item, _Final):
                final = item.status
            elif isinstance(item, _Failed):
                raise item.error
            elif item is _LOGS_END:
                logs_done = True
            if final is not None and logs_done:
                if not shown or final != shown[-1]:
                    yield final
                return
            try:
                item = items.get(timeout=None if end is None else max(0.0, end - time.monotonic()))
            except queue.Empty:  # the run ended but its logs did not, or the wait is late
                latest = final or (shown[-1] if shown else None)
                raise RunTimeoutError(
                    f"stopped following {self.name!r} after {timeout:g} s; it is "
                    f"{latest.state.value if latest else 'not started'}"
                ) from None

    def _follow_wait(
        self, timeout: float | None, progress: ProgressCallback, stop: threading.Event
    ) -> RunStatus:
        """`wait` for `follow`; a backend holding connections ends early once `stop` is set."""
        return self._service.wait([self._ref], timeout, progress, stop)[0]

    def _follow_logs(self, stop: threading.Event) -> Iterator[str]:
        """`logs(follow=True)` for `follow`; ends early once `stop` is set where it can."""
        return self._service.logs(self._ref, True, stop)

    log_prefix = staticmethod(log_prefix)
    log_slot = staticmethod(log_slot)

    def _repr_html_(self) -> str:
        """The run's state in one line, then its timeline (one lane per attempt)."""
        # Imported here: processes that only record runs (a local supervisor) draw nothing.
        from gkeml_sdk.pictures.svg import esc, state_colour
        from gkeml_sdk.pictures.timeline import Step, timeline_svg

        snap = self.snapshot()
        status = snap.status
        steps = [
            Step(t.attempt, t.at, t.status.state.value, _detail(t.status.reason, t.status.message))
            for t in snap.history
        ]
        colour, counters = state_colour(status.state.value), snap.counters
        attempt = max((s.attempt for s in steps), default=1)
        head = (
            f"<div><b>{esc(self.name)}</b> ({esc(self.namespace)}) <span style='color:{colour}'>"
            f"{esc(status.state.value)}</span> {esc(_detail(status.reason, status.message))}; "
            f"attempt {attempt}, {counters.preemptions} preemption(s), "
            f"{counters.user_restarts} restart(s)</div>"
        )
        rows = "".join(
            f"<tr><td>{s.at:.1f} s</td><td>{s.attempt}</td><td>{esc(s.state)}</td>"
            f"<td>{esc(s.detail)}</td></tr>"
            for s in steps
        )
        history = (
            "<details><summary>history</summary><table><tr><th>at</th><th>attempt</th>"
            f"<th>state</th><th>reason: message</th></tr>{rows}</table></details>"
        )
        timeline = timeline_svg(self.name, steps)
        return f"<div data-run='{esc(self.name)}'>{head}{timeline}{history}</div>"

    def __repr__(self) -> str:
        return f"<Run {self.namespace}/{self.name}>"


def runs_html(
    runs: Sequence[Run], note: str = "", states: Sequence[RunStatus] | None = None
) -> str:
    """`runs` as a table with coloured states, durations and attempts, `note` above it;
    `states` are the runs' statuses when the caller has read them already (a table shown in
    two forms reads each run once).

    Example:
        >>> runs_html([], note="local runs")  # doctest: +ELLIPSIS
        '<table data-picture="runs-table" ...no runs...'
    """
    from gkeml_sdk.pictures.table import RunRow, runs_table

    rows = []
    for i, run in enumerate(runs):
        snap = run.snapshot(fresh=states is None)  # given the states, the history is known
        status, history = snap.status if states is None else states[i], snap.history
        seconds = history[-1].at if history else None
        attempts = max((t.attempt for t in history), default=1)
        rows.append(
            RunRow(run.name, run.namespace, status.state.value, status.reason, seconds, attempts)
        )
    return runs_table(rows, note)


def _detail(reason: str, message: str) -> str:
    return ": ".join(part for part in (reason, message) if part)


@dataclass(frozen=True)
class _Line:
    text: str


@dataclass(frozen=True)
class _Final:
    status: RunStatus


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_WAKE = object()  # a transition was recorded: read the run's history
_LOGS_END = object()


def _start(name: str, target: Callable[[], None]) -> None:
    threading.Thread(target=target, name=name, daemon=True).start()


def _read_logs(run: Run, items: queue.Queue[object], stop: threading.Event) -> None:
    try:
        for line in run._follow_logs(stop):
            items.put(_Line(line))
        items.put(_LOGS_END)
    except BaseException as exc:  # surfaced in the caller's thread
        items.put(_Failed(exc))


def _wait(
    run: Run, timeout: float | None, items: queue.Queue[object], stop: threading.Event
) -> None:
    try:
        final = run._follow_wait(timeout, lambda status: items.put(_WAKE), stop)
        items.put(_Final(final))
    except BaseException as exc:  # RunTimeoutError included: the run keeps going
        items.put(_Failed(exc))
