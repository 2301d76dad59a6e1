"""What listing runs costs as they pile up (issue 25 item 1; not a timed test):
`python tests/bench/scale_runs.py [--in-process] [SIZES...]`.

The test API server holds N running runs (N = 10, 100, 1,000): one real submission replayed
from the recording `jobset-succeeded` until it runs (its record, JobSet, Workload and two pods,
about 20 KB), copied straight into the server's store. For each N, in one run: the API requests
and wall time of `client.runs()` with each run's state read (what a caller of the SDK does), and
of the `gkeml runs` command in-process (`main([...])`), each the fastest of 3, with the CPU
seconds of both sides. The server runs in a process of its own, as an API server does
(`--in-process`: in this one, so its work shares our interpreter).

The goals: the lists do not grow with N (as many as at the smallest N; more runs only add
`continue` pages of 500 objects), and `gkeml runs` at 1,000 runs takes under 2 s.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import Accelerator, Client, KubernetesSettings, RunState, TrainingJob
from gkeml_sdk.cli.main import main as cli_main
from tests.bench.scale_rows import ScaleRow
from tests.integration.cluster.clones import put_copy, run_objects
from tests.integration.cluster.replay import Replayer
from tests.kubeapi import KubeAPIServer, shared_crds_dir

SIZES = (10, 100, 1000)
SEED = "zqseed"  # a name no other string of the seeded objects contains
SECONDS_AT_1000 = 2.0
REPEATS = 3  # each figure is the fastest of these
PATHS = ("client.runs() + states", "gkeml runs")
# (lists, requests, wall seconds, client CPU seconds, server CPU seconds)
Measured = dict[tuple[str, int], tuple[int, int, float, float, float]]


def rows(sizes: tuple[int, ...] = SIZES, in_process: bool = False) -> list[ScaleRow]:
    """Measure both listing paths at each size (in this call) against the goals."""
    measured = measure(sizes, in_process)
    found: list[ScaleRow] = []
    for path in PATHS:
        base = measured[(path, sizes[0])][0]
        for size in sizes:
            lists, requests, seconds, client_cpu, server_cpu = measured[(path, size)]
            timed = path == "gkeml runs" and size == 1000
            goal = f"{base} lists (as at {sizes[0]:,} runs)"
            goal += f", < {SECONDS_AT_1000:g} s" if timed else ""
            met = lists == base and (not timed or seconds < SECONDS_AT_1000)
            cpu = f"client {client_cpu:.2f} s, server {server_cpu:.2f} s"
            if in_process:
                cpu = f"{client_cpu:.2f} s, server included"
            measured_text = f"{lists} lists in {requests} requests, {seconds:.2f} s (CPU {cpu})"
            found.append(ScaleRow(f"`{path}`, {size:,} runs", measured_text, goal, met))
    return found


def measure(sizes: tuple[int, ...], in_process: bool = False) -> Measured:
    """(lists, requests, wall seconds) of each path at each size."""
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        if in_process:
            cluster = _Cluster(kubeconfig)
            try:
                return _measure(cluster, kubeconfig, sizes)
            finally:
                cluster.ask("stop", 0)
        here, there = multiprocessing.get_context("spawn").Pipe()
        child = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(there, kubeconfig), daemon=True
        )
        child.start()
        remote = _Remote(here)
        try:
            assert here.recv() == "ready"
            return _measure(remote, kubeconfig, sizes)
        finally:
            remote.ask("stop", 0)
            child.join(timeout=30)


def _measure(cluster: Any, kubeconfig: Path, sizes: tuple[int, ...]) -> Measured:
    settings = KubernetesSettings(kubeconfig=str(kubeconfig), namespace="ml")
    client = Client(kubernetes=settings)
    out: Measured = {}
    for size in sizes:
        cluster.ask("grow", size)
        out[(PATHS[0], size)] = _timed(cluster, partial(_states, client))
        out[(PATHS[1], size)] = _timed(cluster, partial(_cli, str(kubeconfig), size))
    return out


def _states(client: Client) -> None:
    states = [run.state for run in client.runs()]
    assert all(s.state is RunState.RUNNING for s in states), {s.state for s in states}


def _cli(kubeconfig: str, size: int) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["runs", "--kubeconfig", kubeconfig]) == 0
    assert out.getvalue().count("Running") == size, out.getvalue()[-500:]


def _timed(cluster: Any, work: Callable[[], None]) -> tuple[int, int, float, float, float]:
    """The fastest of `REPEATS` runs of `work` (other processes share this machine's two
    cores): its requests, wall and CPU seconds."""
    best: tuple[int, int, float, float, float] | None = None
    for _ in range(REPEATS):
        cluster.ask("clear", 0)
        start, cpu = time.perf_counter(), time.process_time()
        work()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        lists, requests, server_cpu = cluster.ask("count", 0)
        if best is None or seconds < best[2]:
            best = (lists, requests, seconds, cpu, server_cpu)
    assert best is not None
    return best


class _Cluster:
    """The test API server with the seed run, grown on demand (in the calling process)."""

    def __init__(self, kubeconfig: Path) -> None:
        crds = shared_crds_dir()
        assert crds is not None, "the bench needs ../shared/crds"
        self.server = KubeAPIServer(crds, namespaces=["ml"], validate=False, history_size=10)
        self.server.start()
        self.server.kubeconfig(kubeconfig, namespace="ml")
        self.seed = seed_run(self.server)
        self.runs = 1
        self.cpu = 0.0

    def ask(self, command: str, size: int) -> Any:
        """Do `command` ("grow" to `size` runs, "clear" the request log, "count" it, "stop")."""
        if command == "grow":
            for i in range(self.runs, size):
                put_copy(self.server, self.seed, SEED, f"run-{i:05d}")
            self.runs = max(self.runs, size)
        elif command == "clear":
            self.server.clear_request_log()
            self.cpu = time.process_time()
        elif command == "count":
            log = list(self.server.request_log)
            cpu = time.process_time() - self.cpu  # the server's when it has a process
            return sum(1 for r in log if "continue" not in r.query), len(log), cpu
        elif command == "stop":
            self.server.stop()
        return None


class _Remote:
    """`_Cluster` in the server's process, asked through a pipe."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def ask(self, command: str, size: int) -> Any:
        self.conn.send((command, size))
        return self.conn.recv()


def _serve(conn: Any, kubeconfig: Path) -> None:
    cluster = _Cluster(kubeconfig)
    conn.send("ready")
    while True:
        command, size = conn.recv()
        conn.send(cluster.ask(command, size))
        if command == "stop":
            return


def seed_run(server: KubeAPIServer) -> list[str]:
    """Submit one run and replay it until it runs; its objects, to be copied."""
    server.store.put({
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "team-a", "namespace": "ml"}, "spec": {"clusterQueue": "acc-cq"},
    })  # fmt: skip
    job = TrainingJob(
        name=SEED, image="busybox", command=["true"], accelerator=Accelerator("h100", count=8),
        nodes=2, queue="team-a", stateless=True,
    )  # fmt: skip
    Client(kubernetes=KubernetesSettings(api_client=server.api_client(), namespace="ml")).submit(
        job
    )
    Replayer(server, "ml", SEED, 1, SEED).play("jobset-succeeded", "train", until=2.0, pause=0)
    objects = run_objects(server, SEED)
    assert len(objects) == 5, "a record, a JobSet, a Workload and two pods"
    return objects


if __name__ == "__main__":
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    chosen = tuple(int(a) for a in sys.argv[1:] if not a.startswith("--")) or SIZES
    where = "in this process" if flags == ["--in-process"] else "in its own process"
    print(f"test API server {where}\n\n| what | measured | goal | verdict |\n|---|---|---|---|")
    for row in rows(chosen, in_process=flags == ["--in-process"]):
        print(row.line())
