"""Watches held while 100 runs are followed to their end (issue 25 item 3): each run by its own
thread calling `run.wait()`, then `run.follow()` (statuses and logs), then all of them by one
`wait_all`. Counts, not times: the fake API
server counts watch connections as they open and close, so no peak is missed.

    python tests/bench/scale_watch.py
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import Client, RunState
from gkeml_sdk.runs.handle import Run, RunStatus
from tests.bench.bench_reliability import COMPLETED, client, job, server
from tests.bench.scale_rows import ScaleRow
from tests.kubeapi import KubeAPIServer

RUNS = 100
HELD_GOAL = 3  # one watch per kind: JobSet, Workload, Pod
WAIT = 600.0  # seconds; only a hang reaches it


def rows(runs: int = RUNS) -> list[ScaleRow]:
    """Peak and opened watches for `runs` threaded `run.wait()` calls, then for one
    `wait_all` on as many runs; each figure measured in this call."""
    found = []
    ways = (
        ("threaded run.wait()", _threaded),
        ("threaded run.follow()", _threaded_follow),
        ("runs in one wait_all", _wait_all),
    )
    for what, follow in ways:
        peak, opened = watches(runs, follow)
        found.append(
            ScaleRow(
                f"watches held by {runs} {what} (opened in all)",
                f"{peak} held at peak ({opened} opened)",
                f"<= {HELD_GOAL} held",
                peak <= HELD_GOAL,
            )
        )
    return found


def watches(
    runs: int, follow: Callable[[Client, list[Run], Callable], list[RunStatus]]
) -> tuple[int, int]:
    """(most watches open at once, watch requests made) while `runs` runs are followed by
    `follow`; the runs finish only once every one of them has reported its first status, so
    the peak is that of every wait under way at once."""
    api = server()
    try:
        c = client(api, request_timeout=60.0)
        handles = [c.submit(job(i)) for i in range(runs)]
        reported: set[str] = set()
        lock = threading.Lock()
        everyone = threading.Event()

        def progress(run: Run) -> Callable[[RunStatus], None]:
            def heard(status: RunStatus) -> None:
                with lock:
                    reported.add(run.name)
                    if len(reported) == runs:
                        everyone.set()

            return heard

        finisher = threading.Thread(target=_finish, args=(api, handles, everyone), daemon=True)
        api.reset_peak_watches()
        before = api.count("GET", watch=True)
        finisher.start()
        finals = follow(c, handles, progress)
        finisher.join()
        wrong = [f for f in finals if f.state is not RunState.SUCCEEDED]
        assert not wrong, wrong
        return api.peak_watches, api.count("GET", watch=True) - before
    finally:
        api.stop()


def _finish(api: KubeAPIServer, handles: list[Run], everyone: threading.Event) -> None:
    everyone.wait(WAIT)
    for run in handles:
        api.store.update_status("jobsets", "ml", run.name, COMPLETED)


def _each_in_a_thread(
    handles: list[Run], body: Callable[[Run], RunStatus | None]
) -> list[RunStatus]:
    """`body(run)` for every run at once, one thread each; the first error is raised."""
    finals: dict[str, RunStatus | None] = {}
    errors: list[BaseException] = []

    def run_body(run: Run) -> None:
        try:
            finals[run.name] = body(run)
        except BaseException as exc:  # reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=run_body, args=(r,)) for r in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [status for r in handles if (status := finals[r.name]) is not None]


def _threaded(c: Client, handles: list[Run], progress: Callable) -> list[RunStatus]:
    return _each_in_a_thread(handles, lambda run: run.wait(timeout=WAIT, progress=progress(run)))


def _threaded_follow(c: Client, handles: list[Run], progress: Callable) -> list[RunStatus]:
    def follow(run: Run) -> RunStatus | None:
        heard, final = progress(run), None
        for item in run.follow(timeout=WAIT):
            if isinstance(item, RunStatus):
                heard(item)
                final = item
        return final

    return _each_in_a_thread(handles, follow)


def _wait_all(c: Client, handles: list[Run], progress: Callable) -> list[RunStatus]:
    # One callback for every run (a status names no run): the n-th status heard stands for
    # the n-th run, so the runs finish once `runs` statuses were reported.
    stand_ins = iter([progress(r) for r in handles])

    def each(status: RunStatus) -> None:
        callback = next(stand_ins, None)
        if callback is not None:
            callback(status)

    backend = c._backend  # Client.wait_all takes no progress callback
    return backend.wait_all(handles, WAIT, progress=each)  # type: ignore[call-arg]


def main() -> None:
    for row in rows():
        print(row.line())


if __name__ == "__main__":
    main()
