"""Preview and explain in the second after an admission (issue 26): Kueue writes a ClusterQueue's
status about a second after the Workloads change, so the quota is counted from the Workloads.
The test API server plays Kueue's ClusterQueue controller on an explicit clock."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Category, Verdict
from tests.kubeapi.kueue_status import ManualClock

from .kueue_objects import gang, install
from .replay import Replayer

KINDS = ("JobSet", "Job", "Workload", "Pod", "Event")


@pytest.fixture
def kueue(cluster: Any) -> Any:
    return install(cluster)


def gpus_reserved(server: Any) -> str:
    cq = server.store.get("clusterqueues", None, "acc-cq")
    flavor = cq["status"]["flavorsReservation"][0]
    return next(r["total"] for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")


def test_preview_in_the_lag_window_waits_instead_of_fitting(kueue: Any, client: Any) -> None:
    clock = ManualClock()
    controller = kueue.play_cluster_queue_status(clock)
    client.submit(gang("first"))  # 2 pods x 8 GPUs: all 16 of acc-cq
    Replayer(kueue, "ml", "first", 1, "first").play(
        "jobset-queued-behind-another", "first", pause=0, until=1.19, kinds=KINDS
    )
    assert gpus_reserved(kueue) == "0", "admitted, and Kueue has not refreshed the status yet"
    clock.advance(0.5)
    assert gpus_reserved(kueue) == "0" and controller.due == {"acc-cq": 1.0}
    reconciles = controller.reconciles
    lagging = client.preview(gang("second", nodes=1))
    print(lagging.sentence)
    assert lagging.verdict is Verdict.WAITS, lagging.sentence
    assert lagging.sentence.startswith(
        "Waits: cluster queue acc-cq uses 16 of 16 nvidia.com/gpu in flavor acc-flavor "
        "(counted from the Workloads holding it; the ClusterQueue status, which Kueue refreshes "
        "about once a second, still says 0)"
    )
    assert any(e.what == "quota read from Workloads" for e in lagging.evidence)
    clock.advance(0.5)
    assert gpus_reserved(kueue) == "16" and controller.reconciles == reconciles + 1  # one batch
    settled = client.preview(gang("second", nodes=1))
    assert settled.verdict is Verdict.WAITS and "still says" not in settled.sentence


def test_explain_of_a_queued_run_counts_the_admission_the_status_misses(
    kueue: Any, client: Any
) -> None:
    clock = ManualClock()
    kueue.play_cluster_queue_status(clock)
    for spec in (gang("second", nodes=1, gang=True), gang("first")):
        client.submit(spec)
    for spec in (gang("second", nodes=1, gang=True), gang("first")):
        Replayer(kueue, "ml", spec.name, 1, spec.name).play(
            "jobset-queued-behind-another", spec.name, pause=0, until=2.0, kinds=KINDS
        )
    assert gpus_reserved(kueue) == "0"
    found = client.get_run("second").explain()
    assert found.category is Category.QUOTA
    assert "uses 16 of 16 nvidia.com/gpu (flavor acc-flavor) (counted from the Workloads" in (
        found.sentence
    )


def test_preview_reads_a_constant_handful_whatever_waits(kueue: Any, client: Any) -> None:
    """The Workloads holding quota come from one server-side selected list; pending ones are
    never read, however many there are."""
    client.submit(gang("first"))
    Replayer(kueue, "ml", "first", 1, "first").play(
        "jobset-queued-behind-another", "first", pause=0, until=1.19, kinds=KINDS
    )
    waiting = kueue.store.get("workloads", "ml", "jobset-first-e3cac") or {}
    counts = []
    for more in (0, 50):
        for i in range(more):
            kueue.store.put({
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": f"pending-{i}", "namespace": "ml"},
                "spec": {**waiting["spec"], "queueName": "team-a"},
            })  # fmt: skip
        kueue.clear_request_log()
        assert client.preview(gang("second", nodes=1)).verdict is Verdict.WAITS
        workload_lists = [r for r in kueue.request_log if r.path.endswith("/workloads")]
        assert [r.query.get("fieldSelector") for r in workload_lists] == [
            "status.admission.clusterQueue=acc-cq"
        ]
        counts.append(len(kueue.request_log))
    assert counts[0] == counts[1]
