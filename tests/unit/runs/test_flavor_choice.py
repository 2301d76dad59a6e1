"""Which flavor of an ordered ClusterQueue a job would land on now: the first with room, in
the capacity order, skipping one that could only borrow (flavorFungibility TryNextFlavor)."""

from __future__ import annotations

from typing import Any

from gkeml_sdk import Accelerator, Capacity, ClusterSetup, Team, TrainingJob
from gkeml_sdk.runs.explain.explanation import Preview, Verdict
from gkeml_sdk.runs.explain.flavor_choice import landing_flavor, with_landing_flavor
from gkeml_sdk.runs.explain.inputs import QueueObjects

H100 = Accelerator("h100", count=8)


def queues(reserved: dict[str, int], **setup: Any) -> QueueObjects:
    built = ClusterSetup(
        capacity=[Capacity(accelerator=H100, reservation="h100-res",
                           provisioning=["standard", "spot", "flex-start"])],
        teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16}),
               Team(name="team-b", namespaces=["other"], quota={"h100": 16})],
        queues="ordered", **setup,
    ).compile().objects  # fmt: skip
    cqs = {o["metadata"]["name"]: o for o in built if o["kind"] == "ClusterQueue"}
    status = [
        {"name": flavor, "resources": [{"name": "nvidia.com/gpu", "total": str(n)}]}
        for flavor, n in reserved.items()
    ]
    cqs["team-a"]["status"] = {"flavorsReservation": status}
    flavors = {o["metadata"]["name"]: o for o in built if o["kind"] == "ResourceFlavor"}
    local = next(o for o in built if o["kind"] == "LocalQueue")
    return QueueObjects("team-a", "ml", local_queue=local, cluster_queue=cqs["team-a"],
                        cohort_queues=(cqs["team-b"],), flavors=flavors)  # fmt: skip


def workload(nodes: int = 1) -> dict[str, Any]:
    job = TrainingJob(name="ft", image="img", command=["x"], accelerator=H100, nodes=nodes,
                      queue="team-a", capacity=["reservation", "standard", "spot"])  # fmt: skip
    return job.compile().workload or {}


def test_the_first_flavor_with_room_in_the_order_is_the_landing() -> None:
    assert landing_flavor(workload(), queues({})) == "h100-reservation"
    full = queues({"h100-reservation": 16})
    assert landing_flavor(workload(), full) == "h100-standard"
    assert landing_flavor(workload(), queues({"h100-reservation": 16, "h100-standard": 16})) == (
        "h100-spot"
    )


def test_a_flavor_that_only_borrows_yields_unless_the_queue_says_stop() -> None:
    # 8 free of team-a's own 16 reservation GPUs, a 16-GPU job: the reservation flavor only
    # fits by borrowing team-b's idle quota.
    half = {"h100-reservation": 8}
    assert landing_flavor(workload(nodes=2), queues(half)) == "h100-standard"
    stop = queues(half, when_can_borrow="MayStopSearch")
    assert landing_flavor(workload(nodes=2), stop) == "h100-reservation"


def test_the_preview_sentence_names_the_flavor() -> None:
    found = Preview(Verdict.FITS, "Fits now.")
    said = with_landing_flavor(found, workload(), queues({"h100-reservation": 16}))
    assert said.sentence == "Fits now. It would land on flavor h100-standard."
    assert with_landing_flavor(found, workload(), QueueObjects("team-a", "ml")) is found
