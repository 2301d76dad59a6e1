"""What following many runs costs the client (issue 40 item 2; not a timed test):
`python tests/bench/scale_wait.py [SIZES...]`.

The test API server, in a process of its own, holds N running runs (N = 10, 100, 1,000: copies
of one real submission replayed until it runs). One client finds them by name, then follows
all of them to their end, once by one `wait_all` and once by one thread per run calling
`run.wait()`; once every run reported its first status the server completes their JobSets.
Measured from the first wait to the last: the client's CPU seconds (user and system; of them
the system's, shown apart: with a thread per run it is mostly the kernel handing the GIL among
the threads the streams woke), the requests the server saw (reads, watches, writes), the most
watches open at once.

Each is measured twice: with the Lease of a live run controller naming the namespace (as
`gkeml controller install` sets up: the client only follows) and without one (the client then
records each run's news in its record: a wait's first pass lasts until every stream listed, so
a run's first read is one write and its end another, 2 writes a run at every N).

The goals: CPU(1,000) <= 12 x CPU(100) (linear, not quadratic), at most 3 watches (one per kind
followed: JobSet, Workload, Pod) in the one namespace, a run controller acting or not (what it
does shows on the attempt objects: no stream follows the run records), and reads that do not
grow with N. The run controller's Lease is read once per wait, and by threads at most once per
`LEASE_READ_SECONDS` (2 s) of the client's clock: shown apart, it grows with the seconds the
threads take to start, not with N.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import Client, KubernetesSettings, RunState
from gkeml_sdk.backends.kubernetes.runs.liveness import (
    CONTROLLER_NAMESPACE,
)
from gkeml_sdk.runs.handle import Run, RunStatus
from tests.bench.bench_reliability import COMPLETED
from tests.bench.scale_rows import ScaleRow
from tests.bench.scale_runs import SEED, seed_run
from tests.integration.cluster.clones import put_copy
from tests.integration.cluster.test_linear_waits import live_lease
from tests.kubeapi import KubeAPIServer, shared_crds_dir

SIZES = (10, 100, 1000)
CPU_RATIO = 12.0  # CPU(1,000) / CPU(100): 10x the runs, linear with some slack
WATCH_GOAL = 3
WAIT = 900.0  # seconds; only a hang reaches it
WRITES = ("POST", "PUT", "PATCH", "DELETE")
# (client CPU seconds, of them the system's, reads but the Lease's, Lease reads, watch requests,
# writes, most watches open at once)
Measured = tuple[float, float, int, int, int, int, int]


def rows(sizes: tuple[int, ...] = SIZES) -> list[ScaleRow]:
    """Measure both ways of following at each size, with a run controller acting for the runs
    and without one (the client then records them), in this call, against the goals."""
    found = []
    ways = (("one wait_all", _wait_all), ("a thread per run.wait()", _threaded))
    for controller in (True, False):
        for what, follow in ways:
            measured = {size: measure(size, follow, controller) for size in sizes}
            found += _rows(what, controller, measured, sizes)
    return found


def _rows(
    what: str, controller: bool, measured: dict[int, Measured], sizes: tuple[int, ...]
) -> list[ScaleRow]:
    found = []
    reads0 = measured[sizes[0]][2]
    who = "a run controller acts" if controller else "no run controller: the client records"
    for size in sizes:
        cpu, system, reads, leases, watches, writes, peak = measured[size]
        goal = f"<= {WATCH_GOAL} watches, {reads0} reads (as at {sizes[0]:,})"
        met = peak <= WATCH_GOAL and watches <= WATCH_GOAL and reads == reads0
        if size == 1000 and 100 in measured:
            ratio = cpu / max(measured[100][0], 1e-9)
            goal += f", CPU <= {CPU_RATIO:g} x CPU(100) (here {ratio:.1f} x)"
            met = met and ratio <= CPU_RATIO
        text = (
            f"CPU {cpu:.2f} s ({system:.2f} s system), {reads} reads + {leases} of the Lease, "
            f"{watches} watch requests ({peak} open at most), {writes} writes"
        )
        found.append(ScaleRow(f"{what}, {size:,} runs ({who})", text, goal, met))
    return found


def measure(
    size: int,
    follow: Callable[[list[Run], Callable[[Run], Any]], list[RunStatus]],
    controller: bool = True,
) -> Measured:
    """One fresh server with `size` running runs, followed to their end by `follow`; with
    `controller`, the Lease of a live run controller managing their namespace."""
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        here, there = context.Pipe()
        serve = (there, kubeconfig, size, controller)
        child = context.Process(target=_serve, args=serve, daemon=True)
        child.start()
        try:
            assert here.recv() == "ready"
            return _follow(here, kubeconfig, size, follow)
        finally:
            here.send("stop")
            child.join(timeout=60)


def _follow(
    server: Any,
    kubeconfig: Path,
    size: int,
    follow: Callable[[list[Run], Callable[[Run], Any]], list[RunStatus]],
) -> Measured:
    settings = KubernetesSettings(kubeconfig=str(kubeconfig), namespace="ml")
    names = [run.name for run in Client(kubernetes=settings).runs()]
    assert len(names) == size
    # Handles from their records only: what a wait reads first is news it reports.
    client = Client(kubernetes=settings)
    handles = [client.get_run(name) for name in names]
    reported: set[str] = set()
    lock = threading.Lock()
    everyone = threading.Event()

    def progress(run: Run) -> Callable[[RunStatus], None]:
        def heard(status: RunStatus) -> None:
            with lock:
                reported.add(run.name)
                if len(reported) == size:
                    everyone.set()

        return heard

    def finish() -> None:
        everyone.wait(WAIT)
        server.send("finish")

    server.send("clear")
    assert server.recv() == "cleared"
    finisher = threading.Thread(target=finish, daemon=True)
    before = os.times()
    finisher.start()
    finals = follow(handles, progress)
    after = os.times()
    system = after.system - before.system
    cpu = after.user - before.user + system
    finisher.join()
    assert server.recv() == "finished"
    wrong = [f for f in finals if f.state is not RunState.SUCCEEDED]
    assert not wrong and len(finals) == size, wrong[:3]
    server.send("count")
    reads, leases, watches, writes, peak = server.recv()
    return cpu, system, reads, leases, watches, writes, peak


def _wait_all(handles: list[Run], progress: Callable[[Run], Any]) -> list[RunStatus]:
    # One callback for every run (a status names no run): the n-th status heard stands for
    # the n-th run, so the runs finish once as many statuses as runs were reported.
    stand_ins = iter([progress(r) for r in handles])

    def each(status: RunStatus) -> None:
        callback = next(stand_ins, None)
        if callback is not None:
            callback(status)

    service = handles[0]._service  # Client.wait_all takes no progress callback
    return service.wait([r.ref for r in handles], WAIT, progress=each)


def _threaded(handles: list[Run], progress: Callable[[Run], Any]) -> list[RunStatus]:
    finals: dict[str, RunStatus] = {}
    errors: list[BaseException] = []

    def wait(run: Run) -> None:
        try:
            finals[run.name] = run.wait(timeout=WAIT, progress=progress(run))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=wait, args=(r,)) for r in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [finals[r.name] for r in handles]


def _serve(conn: Any, kubeconfig: Path, size: int, controller: bool) -> None:
    crds = shared_crds_dir()
    assert crds is not None, "the bench needs ../shared/crds"
    namespaces = ["ml", CONTROLLER_NAMESPACE]
    history = 10 * size + 100
    server = KubeAPIServer(crds, namespaces=namespaces, validate=False, history_size=history)
    server.start()
    server.kubeconfig(kubeconfig, namespace="ml")
    seed = seed_run(server)
    if controller:  # held, and not seen unchanged for its duration while the bench runs
        live_lease(server)
    for i in range(1, size):
        put_copy(server, seed, SEED, f"run-{i:05d}")
    conn.send("ready")
    while True:
        command = conn.recv()
        if command == "clear":
            server.clear_request_log()
            server.reset_peak_watches()
            conn.send("cleared")
        elif command == "finish":
            for job in server.store.list("jobsets", "ml"):
                server.store.update_status("jobsets", "ml", job["metadata"]["name"], COMPLETED)
            conn.send("finished")
        elif command == "count":
            log = list(server.request_log)
            gets = [r for r in log if r.method == "GET" and not r.watch]
            leases = sum(1 for r in gets if "/leases/" in r.path)
            watches = sum(1 for r in log if r.watch)
            writes = sum(1 for r in log if r.method in WRITES)
            conn.send((len(gets) - leases, leases, watches, writes, server.peak_watches))
        elif command == "stop":
            server.stop()
            return


if __name__ == "__main__":
    chosen = tuple(int(a) for a in sys.argv[1:]) or SIZES
    print("| what | measured | goal | verdict |\n|---|---|---|---|")
    for row in rows(chosen):
        print(row.line(), flush=True)
