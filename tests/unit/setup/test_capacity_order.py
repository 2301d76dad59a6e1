"""Capacity order inside one queue: a ClusterSetup(queues="ordered") ClusterQueue lists each
capacity's flavors in its preference order with flavor fungibility, and a job with a capacity
order carries no selector that pins a mode; a reservation job selects its reservation."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Accelerator, Capacity, ClusterSetup, NodePool, SpecError, Team, TrainingJob
from tests.schemas import validate_object

H100 = Accelerator("h100", count=8)
ORDER = ["reservation", "standard", "spot", "flex-start", "queued"]
# Every key a mode's flavor adds: a pod that selected one of them would match only that flavor.
MODE_KEYS = {
    "cloud.google.com/reservation-name",
    "cloud.google.com/reservation-affinity",
    "cloud.google.com/reservation-project",
    "cloud.google.com/gke-spot",
    "cloud.google.com/gke-flex-start",
    "cloud.google.com/gke-queued",
}


def ordered_setup(**kw: Any) -> ClusterSetup:
    capacity = Capacity(
        accelerator=H100,
        reservation="h100-res",
        provisioning=["standard", "spot", "flex-start", "queued"],
    )
    return ClusterSetup(capacity=[capacity, Capacity(accelerator=Accelerator("l4"),
                                                     provisioning=["spot", "standard"])],
                        teams=[Team(name="team-a", quota={"h100": 16, "l4": 4})],
                        queues="ordered", **kw)  # fmt: skip


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def test_one_cluster_queue_holds_every_mode_in_the_capacity_order() -> None:
    objects = ordered_setup().compile().objects
    for obj in objects:
        validate_object(obj)
    (queue,) = of_kind(objects, "ClusterQueue").values()
    assert queue["metadata"]["name"] == "team-a"
    (group,) = queue["spec"]["resourceGroups"]
    assert [f["name"] for f in group["flavors"]] == [
        *(f"h100-{m}" for m in ORDER),
        "l4-spot",
        "l4-standard",
    ]
    assert queue["spec"]["flavorFungibility"] == {
        "whenCanBorrow": "TryNextFlavor",
        "whenCanPreempt": "TryNextFlavor",
    }
    # Only the queued flavor asks GKE for a ProvisioningRequest.
    assert queue["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "gkeml-queued-provisioning", "onFlavors": ["h100-queued"]}]
    }
    assert list(of_kind(objects, "LocalQueue")) == ["team-a"]


def test_the_reservation_flavor_selects_the_reservation_its_pools_consume() -> None:
    flavors = of_kind(ordered_setup().compile().objects, "ResourceFlavor")
    assert flavors["h100-reservation"]["spec"]["nodeLabels"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "cloud.google.com/reservation-name": "h100-res",
        "cloud.google.com/reservation-affinity": "specific",
    }
    pool = NodePool(name="h100-res", hardware=H100, reservation="h100-res")
    (request,) = pool.to_dict()["nodePools"]
    labels = request["config"]["labels"]
    assert flavors["h100-reservation"]["spec"]["nodeLabels"].items() - labels.items() == {
        ("cloud.google.com/gke-accelerator", "nvidia-h100-80gb")  # GKE's own node label
    }
    assert request["config"]["reservationAffinity"]["values"] == ["h100-res"]
    (capacity,) = Capacity.from_node_pools([pool, NodePool(name="s", hardware=H100, spot=True)])
    assert (capacity.provisioning, capacity.reservation) == (("reservation", "spot"), "h100-res")


def test_a_job_with_a_capacity_order_carries_no_pinning_selector() -> None:
    job = TrainingJob(name="ft", image="img", command=["x"], accelerator=H100, nodes=2,
                      queue="team-a", capacity=ORDER, reservation="h100-res")  # fmt: skip
    manifests = job.compile()
    for obj in manifests.objects:
        validate_object(obj)
    pod = manifests.main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}
    assert not MODE_KEYS & {t["key"] for t in pod["tolerations"]}
    # The shortest grace of the modes it may get: Spot's.
    assert pod["terminationGracePeriodSeconds"] == 15
    # Every flavor of the ordered queue matches the pods, so Kueue may pick any of them.
    flavors = of_kind(ordered_setup().compile().objects, "ResourceFlavor")
    for name in (f"h100-{m}" for m in ORDER):
        labels = flavors[name]["spec"]["nodeLabels"]
        assert all(labels[k] == v for k, v in pod["nodeSelector"].items() if k in labels)
    cost = job.estimate_cost(hours=1)
    assert (cost.chosen, cost.may_get) == ("on-demand", ("on-demand", "spot", "flex-start"))
    assert str(cost).count("<- this job") == 3


def test_a_reservation_job_selects_its_reservation() -> None:
    job = TrainingJob(name="ft", image="img", command=["x"], accelerator=H100,
                      reservation="projects/owner-proj/reservations/h100-res")  # fmt: skip
    for obj in job.compile().objects:
        validate_object(obj)
    assert job.compile().main["spec"]["template"]["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "cloud.google.com/reservation-name": "h100-res",
        "cloud.google.com/reservation-affinity": "specific",
        "cloud.google.com/reservation-project": "owner-proj",
    }


def test_one_mode_is_spelled_as_the_pinned_field() -> None:
    def job(**kw: Any) -> TrainingJob:
        return TrainingJob(name="a", command=["x"], accelerator=H100, **kw)

    assert job(capacity=["spot"]) == job(spot=True)
    assert job(capacity=["flex-start"]) == job(provisioning="flex-start")
    assert job(capacity=["spot"], reservation="r1").capacity == ("reservation", "spot")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"capacity": ["standard", "spot"], "spot": True}, r"replaces spot= and provisioning="),
        ({"capacity": ["spot", "standard", "spot"]}, r"repeats a mode"),
        ({"reservation": "r1", "spot": True}, r"never consume reservations"),
        ({"reservation": "R_1"}, r"not a reservation name"),
        ({"capacity": ["standard", "flex-start"], "accelerator": Accelerator("t4")},
         r"Dynamic Workload Scheduler.*does not offer"),
        ({"capacity": ["standard", "flex-start"], "max_runtime": "8d"}, r"at most 7 days"),
    ],
)  # fmt: skip
def test_capacity_orders_gke_cannot_serve_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        TrainingJob(**{"name": "a", "command": ["x"], "accelerator": H100, **fields})


def test_a_reservation_mode_needs_its_reservation() -> None:
    with pytest.raises(SpecError, match="reservation='NAME'"):
        Capacity(accelerator=H100, provisioning=["reservation", "standard"])


def test_topology_placement_needs_nodes_with_topology_labels() -> None:
    with pytest.raises(SpecError, match=r"gce-topology labels.*Try: drop placement="):
        TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4"), placement="compact")
    assert TrainingJob(name="a", command=["x"], accelerator=H100, placement="compact").placement
    with pytest.raises(SpecError, match=r"topology=True on a2-highgpu-1g.*Try: topology=False"):
        ClusterSetup(capacity=[Capacity(accelerator=Accelerator("a100-40gb"), topology=True)],
                     teams=[Team(name="a", quota={"a100-40gb": 1})])  # fmt: skip


def test_gb200_pods_select_and_tolerate_arm64_nodes() -> None:
    job = TrainingJob(name="gb", image="img", command=["x"], nodes=2,
                      accelerator=Accelerator("gb200", count=4))  # fmt: skip
    manifests = job.compile()
    for obj in manifests.objects:
        validate_object(obj)
    pod = manifests.main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"]["kubernetes.io/arch"] == "arm64"
    assert "kubernetes.io/arch" in {t["key"] for t in pod["tolerations"]}
    flavor = of_kind(ClusterSetup(capacity=[Capacity(accelerator=Accelerator("gb200", count=4))],
                                  teams=[Team(name="a", quota={"gb200": 4})]).compile().objects,
                     "ResourceFlavor")["gb200-standard"]  # fmt: skip
    assert flavor["spec"]["nodeLabels"]["kubernetes.io/arch"] == "arm64"
    x86 = TrainingJob(name="h", image="img", command=["x"], accelerator=H100).compile()
    assert "kubernetes.io/arch" not in x86.main["spec"]["template"]["spec"]["nodeSelector"]
