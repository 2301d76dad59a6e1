"""What the run controller costs its API server as the runs it manages pile up (issue 40
item 1; ratios and counts, not times): `python tests/bench/bench_controller_scale.py [SIZES...]`
(default 100 1000 10000).

The test API server runs in a process of its own (its CPU is not the controller's) and holds
N running runs: one real submission replayed from the recording `jobset-succeeded` until it
runs (its record, JobSet, Workload and two pods), copied straight into the store, each copy's
JobSet vouching for its record as a submission's does. Two controllers run as `gkeml
controller install` ships them: the leader in this process, the second replica in a process of
its own. For each N:

- requests per resync at rest: two resyncs asked of the leader once its first turns are over,
  counted at the server, Lease requests apart (goal: 0 besides the Lease);
- requests per state change of one run: its JobSet ends; counted until the leader recorded the
  end (goal: at most 3);
- client CPU per event: `time.process_time()` of this process over 20 runs ending one after
  the other (after 5 not counted), per run's end (goal: flat in N, within 2x of the
  cheapest N);
- resident memory per managed run: `tracemalloc`'s traced memory of a controller that synced
  and gave each run its first turn, over N (goal: under 20 KB at 10,000 runs);
- the Lease: held by the leader throughout (its holder and `leaseTransitions` unchanged, the
  second replica never acted).
"""

from __future__ import annotations

import multiprocessing
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import KubernetesSettings, RunState
from gkeml_sdk.backends.kubernetes.backend import KubernetesBackend
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    SPEC_DIGEST_ANNOTATION,
    RunRecord,
    spec_digest,
)
from tests.bench.scale_rows import ScaleRow
from tests.bench.scale_runs import SEED, seed_run
from tests.integration.cluster.clones import put_copy
from tests.integration.cluster.test_shared_streams import end
from tests.kubeapi import KubeAPIServer, shared_crds_dir

SIZES = (100, 1000, 10000)
ENDED = 20  # runs ended one after the other for the CPU per event
WARM = 5  # ended before, not counted
CHANGES_AT_MOST = 3
KB_PER_RUN_AT_10000 = 20.0
CPU_SPREAD = 2.0
WAIT = 3600.0  # seconds any one step may take on this machine before the bench gives up


def name(i: int) -> str:
    return f"run-{i:05d}"


class Server:
    """The test API server with N runs (in the server's process)."""

    def __init__(self, kubeconfig: Path) -> None:
        crds = shared_crds_dir()
        assert crds is not None, "the bench needs ../shared/crds"
        self.server = KubeAPIServer(
            crds, namespaces=["ml", "gkeml-system"], validate=False, history_size=100000
        )
        self.server.start()
        self.server.kubeconfig(kubeconfig, namespace="ml")
        self.seed = seed_run(self.server)
        self.runs = 0

    def ask(self, command: str, arg: Any) -> Any:
        log = self.server.request_log
        if command == "grow":
            for i in range(self.runs, arg):
                put_copy(self.server, self.seed, SEED, name(i))
                record = self.server.store.get("configmaps", "ml", f"{name(i)}-gkeml-run")
                digest = spec_digest(RunRecord.from_configmap(record))
                meta = {"metadata": {"annotations": {SPEC_DIGEST_ANNOTATION: digest}}}
                self.server.store.patch("jobsets", "ml", name(i), meta)
            if self.runs == 0:  # the seed itself is no run of the bench
                self.server.store.delete("configmaps", "ml", f"{SEED}-gkeml-run")
                self.server.store.delete("jobsets", "ml", SEED)
            self.runs = max(self.runs, arg)
        elif command == "clear":
            self.server.clear_request_log()
        elif command == "count":
            lease = [r for r in log if "/leases/" in r.path]
            other = [
                f"{r.method} {r.path}" for r in log if not r.watch and "/leases/" not in r.path
            ]
            return other, len(lease)
        elif command == "end":
            for run in arg:
                end(self.server, run, RunState.SUCCEEDED)
        elif command == "lease":
            lease = self.server.store.get("leases", "gkeml-system", "gkeml-run-controller")
            spec = (lease or {}).get("spec") or {}
            return spec.get("holderIdentity"), spec.get("leaseTransitions")
        elif command == "stop":
            self.server.stop()
        return None


def _serve(conn: Any, kubeconfig: Path) -> None:
    server = Server(kubeconfig)
    conn.send("ready")
    while True:
        command, arg = conn.recv()
        conn.send(server.ask(command, arg))
        if command == "stop":
            return


def _replica(conn: Any, kubeconfig: str) -> None:
    """The second replica, in a process of its own, until told to stop: whether it acted."""
    settings = KubernetesSettings(kubeconfig=kubeconfig, namespace="ml")
    controller = RunController(KubernetesBackend(settings), ["ml"], identity="replica-b")
    thread = threading.Thread(target=controller.run, daemon=True)
    thread.start()
    conn.send("ready")
    conn.recv()
    controller.stop()
    thread.join(timeout=60)
    conn.send(controller.resyncs)


class Remote:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def ask(self, command: str, arg: Any = None) -> Any:
        self.conn.send((command, arg))
        return self.conn.recv()


def wait_until(what: str, check: Callable[[], bool]) -> None:
    end_at = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < end_at, f"timed out waiting for {what}"
        time.sleep(0.05)


def started(kubeconfig: str, size: int) -> tuple[RunController, threading.Thread]:
    """The leader, once it synced and gave every run its first turn."""
    settings = KubernetesSettings(kubeconfig=kubeconfig, namespace="ml")
    controller = RunController(
        KubernetesBackend(settings), ["ml"], identity="leader-a", resync=3600.0
    )
    thread = threading.Thread(target=controller.run, daemon=True)
    thread.start()
    wait_until("the first resync", lambda: controller.resyncs >= 1)
    wait_until(f"{size} runs", lambda: len(controller.runs) == size)
    assert controller.queue.join(timeout=WAIT)
    return controller, thread


def resync(controller: RunController) -> None:
    before = controller.resyncs
    controller.resync_now()
    wait_until("a resync", lambda: controller.resyncs == before + 1)
    assert controller.queue.join(timeout=WAIT)


def ends(server: Remote, leader: RunController, runs: list[Any]) -> None:
    """End `runs` one after the other, each once the leader recorded the one before."""
    for one in runs:
        server.ask("end", [one.name])
        wait_until("an end recorded", lambda one=one: one.record.current.outcome != "")
    assert leader.queue.join(timeout=WAIT)


def stopped(controller: RunController, thread: threading.Thread) -> None:
    controller.stop()
    thread.join(timeout=120)
    assert not thread.is_alive()


def memory_per_run(kubeconfig: str, size: int) -> float:
    """Bytes `tracemalloc` traces for a synced controller with `size` runs, per run."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    controller, thread = started(kubeconfig, size)
    held = tracemalloc.get_traced_memory()[0] - base
    stopped(controller, thread)
    tracemalloc.stop()
    return held / size


def measure(server: Remote, kubeconfig: str, size: int) -> dict[str, Any]:
    server.ask("grow", size)
    out: dict[str, Any] = {"memory": memory_per_run(kubeconfig, size)}
    wall, cpu = time.perf_counter(), time.process_time()
    leader, thread = started(kubeconfig, size)
    out["start_cpu"], out["start_wall"] = time.process_time() - cpu, time.perf_counter() - wall
    context = multiprocessing.get_context("spawn")
    here, there = context.Pipe()
    replica = context.Process(target=_replica, args=(there, kubeconfig), daemon=True)
    replica.start()
    try:
        assert here.recv() == "ready"
        holder = server.ask("lease")
        resync(leader)  # what the first turns wrote has come back on the streams
        server.ask("clear")
        resync(leader)
        resync(leader)
        other, lease = server.ask("count")
        out["per_resync"], out["lease"] = len(other) / 2, lease
        server.ask("clear")
        run = leader.runs[("ml", name(size // 2))]
        server.ask("end", [run.name])
        wait_until("its end recorded", lambda: run.record.current.outcome == "Succeeded")
        assert leader.queue.join(timeout=WAIT)
        out["change"], _ = server.ask("count")
        # The last runs of this size: a smaller size before ended none of them.
        runs = [leader.runs[("ml", name(i))] for i in range(size - WARM - ENDED, size)]
        ends(server, leader, runs[:WARM])  # code paths not taken before: not counted
        cpu = time.process_time()
        ends(server, leader, runs[WARM:])
        out["cpu_per_event"] = (time.process_time() - cpu) / ENDED
        out["kept"] = server.ask("lease") == holder and holder[0] == "leader-a"
    finally:
        here.send("stop")
        out["replica_acted"] = here.recv()
        replica.join(timeout=60)
        stopped(leader, thread)
    return out


def rows(sizes: tuple[int, ...] = SIZES) -> list[ScaleRow]:
    """Measure the controller at each size against the goals."""
    context = multiprocessing.get_context("spawn")
    found: list[ScaleRow] = []
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        here, there = context.Pipe()
        child = context.Process(target=_serve, args=(there, kubeconfig), daemon=True)
        child.start()
        server = Remote(here)
        try:
            assert here.recv() == "ready"
            measured = {size: measure(server, str(kubeconfig), size) for size in sizes}
        finally:
            server.ask("stop")
            child.join(timeout=30)
    base = min(m["cpu_per_event"] for m in measured.values())  # the cheapest size
    for size in sizes:
        m = measured[size]
        where = f"{size:,} runs"
        kept = m["kept"] and m["replica_acted"] == 0
        found += [
            ScaleRow(
                f"requests per resync at rest, {where}",
                f"{m['per_resync']:g} (+ {m['lease']} Lease requests of both replicas in "
                "2 resyncs)",
                "0 besides the Lease",
                m["per_resync"] == 0,
            ),
            ScaleRow(
                f"requests per state change of one run, {where}",
                f"{len(m['change'])}: {', '.join(m['change']) or 'none'}",
                f"at most {CHANGES_AT_MOST}",
                len(m["change"]) <= CHANGES_AT_MOST,
            ),
            ScaleRow(
                f"client CPU per event, {where}",
                f"{m['cpu_per_event'] * 1000:.2f} ms ({m['cpu_per_event'] / base:.2f}x "
                f"the cheapest size); start-up {m['start_cpu']:.1f} s CPU, "
                f"{m['start_wall']:.1f} s",
                f"within {CPU_SPREAD:g}x of the cheapest size",
                m["cpu_per_event"] <= CPU_SPREAD * base,
            ),
            ScaleRow(
                f"memory per managed run, {where}",
                f"{m['memory'] / 1024:.1f} KB (tracemalloc)",
                f"< {KB_PER_RUN_AT_10000:g} KB at 10,000 runs" if size == 10000 else "report",
                size != 10000 or m["memory"] / 1024 < KB_PER_RUN_AT_10000,
            ),
            ScaleRow(
                f"Lease kept by the leader, {where}",
                "yes" if kept else f"no (second replica resynced {m['replica_acted']} times)",
                "never lost while it works",
                kept,
            ),
        ]
    return found


if __name__ == "__main__":
    chosen = tuple(int(a) for a in sys.argv[1:]) or SIZES
    print("test API server in its own process\n\n| what | measured | goal | verdict |")
    print("|---|---|---|---|")
    table = rows(chosen)
    for row in table:
        print(row.line())
    raise SystemExit(0 if all(row.met for row in table) else 1)
