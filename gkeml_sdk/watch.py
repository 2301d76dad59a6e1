"""Follow a run of any backend: its log lines and its status changes as one stream, for
notebook displays and command-line tools that show both."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

from gkeml_sdk.errors import RunTimeoutError
from gkeml_sdk.run import Run, RunStatus

_END = object()


def follow(
    run: Run, *, timeout: float | None = None, poll: float = 0.2
) -> Iterator[str | RunStatus]:
    """Yield log lines (`str`, prefixed by rank) and each new `RunStatus` of `run` (every
    transition of its history, so a brief PREEMPTED is not missed) until it is terminal and its
    logs are drained. Raises `RunTimeoutError` after `timeout` seconds (the
    run keeps going).

    Logs are read by a daemon thread, so a status change shows even while no line arrives.

    Example:
        >>> from gkeml_sdk import Client, RunStatus  # doctest: +SKIP
        >>> run = Client(backend="local").get_run("hello")  # doctest: +SKIP
        >>> for item in follow(run, timeout=600):  # doctest: +SKIP
        ...     print(item if isinstance(item, str) else f"status: {item}")
    """
    lines: queue.Queue[object] = queue.Queue()
    failure: list[BaseException] = []

    def pump() -> None:
        try:
            for line in run.logs(follow=True):
                lines.put(line)
        except BaseException as exc:  # surfaced in the caller's thread
            failure.append(exc)
        finally:
            lines.put(_END)

    threading.Thread(target=pump, name=f"gkeml-logs-{run.name}", daemon=True).start()
    deadline = None if timeout is None else time.monotonic() + timeout
    last: RunStatus | None = None
    seen = 0
    logs_done = False
    while True:
        history = run.history
        for transition in history[seen:]:
            last = transition.status
            yield last
        seen = len(history)
        status = run.state
        if status != last:
            last = status
            yield status
        try:
            item = lines.get(timeout=poll)
            while True:
                if item is _END:
                    logs_done = True
                    break
                assert isinstance(item, str)
                yield item
                item = lines.get_nowait()
        except queue.Empty:
            pass
        if failure:
            raise failure[0]
        if logs_done and status.terminal:
            final = run.state
            if final != last:
                yield final
            return
        if deadline is not None and time.monotonic() >= deadline:
            raise RunTimeoutError(
                f"stopped following {run.name!r} after {timeout:g} s; it is still "
                f"{status.state.value}"
            )
