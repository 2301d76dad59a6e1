"""What listing runs costs as they pile up (issue 25 item 1; not a timed test):
`python tests/bench/scale_runs.py [SIZES...]`.

The fake API server holds N running runs (N = 10, 100, 1,000): one real submission replayed
from the recording `jobset-succeeded` until it runs (its record, JobSet, Workload and two pods),
copied N times straight into the server's store. For each N, in one run: the API requests and
wall time of `client.runs()` with each run's state read (what a caller of the SDK does), and of
the `gkeml runs` command in-process (`main([...])`). The goals: the requests do not grow with N
(as many as at the smallest N), and `gkeml runs` at 1,000 runs takes under 2 s.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
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


def rows(sizes: tuple[int, ...] = SIZES) -> list[ScaleRow]:
    """Measure both listing paths at each size (in this call) against the goals."""
    measured = measure(sizes)
    found: list[ScaleRow] = []
    for path in ("client.runs() + states", "gkeml runs"):
        base = measured[(path, sizes[0])][0]
        for size in sizes:
            requests, seconds = measured[(path, size)]
            timed = path == "gkeml runs" and size == 1000
            goal = f"{base} requests (as at {sizes[0]} runs)"
            goal += f", < {SECONDS_AT_1000:g} s" if timed else ""
            met = requests == base and (not timed or seconds < SECONDS_AT_1000)
            found.append(
                ScaleRow(
                    f"`{path}`, {size:,} runs",
                    f"{requests} requests, {seconds:.2f} s",
                    goal,
                    met,
                )
            )
    return found


def measure(sizes: tuple[int, ...]) -> dict[tuple[str, int], tuple[int, float]]:
    """(requests, wall seconds) of each path at each size."""
    crds = shared_crds_dir()
    assert crds is not None, "the bench needs ../shared/crds"
    out: dict[tuple[str, int], tuple[int, float]] = {}
    with KubeAPIServer(crds, namespaces=["ml"], validate=False, history_size=10) as server:
        server.store.put(_local_queue())
        client = Client(
            kubernetes=KubernetesSettings(api_client=server.api_client(), namespace="ml")
        )
        seed = _seed(server, client)
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = str(server.kubeconfig(Path(tmp) / "kubeconfig", namespace="ml"))
            have = 1
            for size in sizes:
                for i in range(have, size):
                    put_copy(server, seed, SEED, f"run-{i:05d}")
                have = max(have, size)
                out[("client.runs() + states", size)] = _timed(server, partial(_states, client))
                out[("gkeml runs", size)] = _timed(server, partial(_cli, kubeconfig, size))
    return out


def _states(client: Client) -> None:
    states = [run.state for run in client.runs()]
    assert all(s.state is RunState.RUNNING for s in states), {s.state for s in states}


def _cli(kubeconfig: str, size: int) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["runs", "--kubeconfig", kubeconfig]) == 0
    assert out.getvalue().count("Running") == size, out.getvalue()[-500:]


def _timed(server: KubeAPIServer, work: Any) -> tuple[int, float]:
    server.clear_request_log()
    start = time.perf_counter()
    work()
    seconds = time.perf_counter() - start
    return len(server.request_log), seconds


def _local_queue() -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a", "namespace": "ml"},
        "spec": {"clusterQueue": "acc-cq"},
    }


def _seed(server: KubeAPIServer, client: Client) -> list[str]:
    """Submit one run and replay it until it runs; its objects, to be copied."""
    job = TrainingJob(
        name=SEED, image="busybox", command=["true"], accelerator=Accelerator("h100", count=8),
        nodes=2, queue="team-a", stateless=True,
    )  # fmt: skip
    client.submit(job)
    Replayer(server, "ml", SEED, 1, SEED).play("jobset-succeeded", "train", until=2.0, pause=0)
    objects = run_objects(server, SEED)
    assert len(objects) == 5, "a record, a JobSet, a Workload and two pods"
    return objects


if __name__ == "__main__":
    chosen = tuple(int(a) for a in sys.argv[1:]) or SIZES
    print("| what | measured | goal | verdict |\n|---|---|---|---|")
    for row in rows(chosen):
        print(row.line())
