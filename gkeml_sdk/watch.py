"""Follow a run of any backend: its log lines and its status changes as one stream, for
notebook displays and command-line tools that show both."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gkeml_sdk.errors import RunTimeoutError
from gkeml_sdk.run import Run, RunStatus


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


def follow(run: Run, *, timeout: float | None = None) -> Iterator[str | RunStatus]:
    """Yield log lines (`str`, prefixed by rank) and each new `RunStatus` of `run` (every
    transition of its history, so a brief PREEMPTED is not missed) until it is terminal and its
    logs are drained. Raises `RunTimeoutError` after `timeout` seconds (the run keeps going).

    Statuses come from the backend's own wait (`run.wait`, which on a cluster follows the
    shared watch streams), run in a daemon thread: following costs no request per second.
    Logs are read by another daemon thread, so a status change shows while no line arrives.

    Example:
        >>> from gkeml_sdk import Client, RunStatus  # doctest: +SKIP
        >>> run = Client(backend="local").get_run("hello")  # doctest: +SKIP
        >>> for item in follow(run, timeout=600):  # doctest: +SKIP
        ...     print(item if isinstance(item, str) else f"status: {item}")
    """
    items: queue.Queue[object] = queue.Queue()
    _start(f"gkeml-logs-{run.name}", lambda: _read_logs(run, items))
    _start(f"gkeml-status-{run.name}", lambda: _wait(run, timeout, items))
    end = None if timeout is None else time.monotonic() + timeout
    shown: list[RunStatus] = []  # statuses yielded so far
    seen = 0  # history entries read so far
    final: RunStatus | None = None
    logs_done = False
    item: object = _WAKE
    while True:
        if item is _WAKE or isinstance(item, _Final):
            history = run.history  # only when a transition was reported: a local file read
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
                f"stopped following {run.name!r} after {timeout:g} s; it is "
                f"{latest.state.value if latest else 'not started'}"
            ) from None


def _start(name: str, target: Callable[[], None]) -> None:
    threading.Thread(target=target, name=name, daemon=True).start()


def _read_logs(run: Run, items: queue.Queue[object]) -> None:
    try:
        for line in run.logs(follow=True):
            items.put(_Line(line))
        items.put(_LOGS_END)
    except BaseException as exc:  # surfaced in the caller's thread
        items.put(_Failed(exc))


def _wait(run: Run, timeout: float | None, items: queue.Queue[object]) -> None:
    try:
        final = run.wait(timeout=timeout, progress=lambda status: items.put(_WAKE))
        items.put(_Final(final))
    except BaseException as exc:  # RunTimeoutError included: the run keeps going
        items.put(_Failed(exc))
