"""What `client.preview(job)` reads as Workloads pile up (issue 25 item 2; not a timed test):
`python tests/bench/bench_preview.py`.

The fake API server holds Kueue's objects of the recordings, one Workload holding all 16 GPUs
of acc-cq and N pending Workloads (the recorded `second`, a realistic 1.5 KB each) for N = 0,
1,000 and 4,000. For each N: API requests of one preview and the client's CPU (the calling
thread's process time: the server runs in other threads) as a ratio to the preview at N = 0
measured in the same run. The goal: requests constant, CPU ratio close to 1 (the reads do not
grow with what waits).
"""

from __future__ import annotations

import copy
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gkeml_sdk import Accelerator, Client, KubernetesSettings, TrainingJob, Verdict
from tests.bench.scale_rows import ScaleRow
from tests.kubeapi import KubeAPIServer, shared_crds_dir
from tests.kueue_usage import flavors_reservation
from tests.schemas import RECORDINGS

KUEUE = "kueue.x-k8s.io/v1beta2"
SIZES = (0, 1000, 4000)
RUNS = 9


def recorded_workloads() -> tuple[dict[str, Any], dict[str, Any]]:
    """(`first` holding 16 GPUs, `second` pending) as Kueue wrote them."""
    found: dict[str, dict[str, Any]] = {}
    path = RECORDINGS / "jobset-queued-behind-another.jsonl"
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["kind"] == "Workload" and event["t"] < 2.0:
            found[event["name"]] = event["object"]
    return found["jobset-first-e3cac"], found["jobset-second-3fbfa"]


def cluster() -> KubeAPIServer:
    crds = shared_crds_dir()
    assert crds is not None, "the bench needs ../shared/crds"
    server = KubeAPIServer(crds, namespaces=["ml"], validate=False, history_size=10)
    resources = [{"name": "cpu", "nominalQuota": "64"}, {"name": "nvidia.com/gpu",
                                                          "nominalQuota": "16"}]  # fmt: skip
    server.store.put({
        "apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": "acc-cq"},
        "spec": {"namespaceSelector": {}, "preemption": {"withinClusterQueue": "LowerPriority"},
                 "resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"],
                                     "flavors": [{"name": "acc-flavor", "resources": resources}]}]},
    })  # fmt: skip
    server.store.put({"apiVersion": KUEUE, "kind": "ResourceFlavor",
                      "metadata": {"name": "acc-flavor"}, "spec": {}})  # fmt: skip
    server.store.put({"apiVersion": KUEUE, "kind": "LocalQueue",
                      "metadata": {"name": "team-a", "namespace": "ml"},
                      "spec": {"clusterQueue": "acc-cq"}})  # fmt: skip
    first, _ = recorded_workloads()
    server.store.put(_in_ml(first, first["metadata"]["name"]))
    # The settled status Kueue writes a second later, so a status-reading preview agrees too.
    reserved = flavors_reservation("acc-cq", server.store.list("workloads"))
    server.store.update_status("clusterqueues", None, "acc-cq", {"flavorsReservation": reserved})
    return server


def _in_ml(obj: dict[str, Any], name: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    meta = out["metadata"]
    for field in ("resourceVersion", "uid", "creationTimestamp", "generation"):
        meta.pop(field, None)
    meta.update(name=name, namespace="ml")
    return out


def measure(server: KubeAPIServer, client: Client, job: TrainingJob) -> tuple[int, float]:
    """(requests, best client CPU seconds) of one preview."""
    best = float("inf")
    for _ in range(RUNS):
        server.clear_request_log()
        gc.collect()
        gc.disable()  # the cyclic GC would walk the in-process server's objects on our time
        start = time.thread_time()
        verdict = client.preview(job).verdict
        best = min(best, time.thread_time() - start)
        gc.enable()
        assert verdict is Verdict.WAITS, verdict
    return len(server.request_log), best


def measured() -> list[tuple[int, int, float]]:
    """(pending Workloads, requests, best client CPU seconds) of one preview per size."""
    _, pending = recorded_workloads()
    gpus = Accelerator("h100", count=8)
    job = TrainingJob(name="second", image="busybox", command=["true"], accelerator=gpus,
                      nodes=1, queue="team-a")  # fmt: skip
    with cluster() as server:
        api_client = server.api_client()
        client = Client(kubernetes=KubernetesSettings(api_client=api_client, namespace="ml"))
        for _ in range(3):
            client.preview(job)  # warm: imports, schema builds, connections
        found = []
        for size in SIZES:
            have = len(server.store.items("workloads.kueue.x-k8s.io")) - 1
            for i in range(have, size):
                server.store.put(_in_ml(pending, f"pending-{i:05d}"))
            found.append((size, *measure(server, client, job)))
    return found


def rows() -> list[ScaleRow]:
    """The preview rows of the scale table: requests and client CPU at 1k and 4k Workloads."""
    found = measured()
    base_requests, base_cpu = found[0][1], found[0][2]
    table = []
    for size, requests, cpu in found[1:]:
        table.append(
            ScaleRow(f"preview with {size:,} pending Workloads: requests", str(requests),
                     f"constant ({base_requests} at 0)", requests == base_requests)
        )  # fmt: skip
        table.append(
            ScaleRow(f"preview with {size:,} pending Workloads: client CPU / CPU at 0",
                     f"{cpu / base_cpu:.2f}", "close to 1 (at most 2)", cpu / base_cpu <= 2)
        )  # fmt: skip
    return table


def main() -> None:
    found = measured()
    base_cpu = found[0][2]
    print(f"{'pending':>8} {'requests':>9} {'cpu/cpu@0':>10} {'cpu ms':>7}  (best of {RUNS})")
    for size, requests, cpu in found:
        print(f"{size:>8} {requests:>9} {cpu / base_cpu:>10.2f} {cpu * 1000:>7.1f}")


if __name__ == "__main__":
    main()
