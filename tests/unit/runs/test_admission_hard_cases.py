"""Preview and why answer the hard cases right, from one model of admission: a Spot job is
never "Fits now" in an on-demand flavor, a topology request never fits a flavor without a
topology, and a request beyond the queue's maximum never says to wait."""

from __future__ import annotations

import json
from typing import Any

from gkeml_sdk import Accelerator, Capacity, ClusterSetup, Team, TrainingJob, Verdict
from gkeml_sdk.runs.explain.explanation import Category
from gkeml_sdk.runs.explain.queued import why_queued
from tests.schemas import RECORDINGS, needs_recordings

SETUP = ClusterSetup(
    capacity=[
        Capacity(accelerator=Accelerator("h100", count=8), provisioning=["standard", "spot"])
    ],
    teams=[Team(name="research", namespaces=["research"], quota={"h100": 32})],
)


def job(**fields: Any) -> TrainingJob:
    return TrainingJob(
        name="ft", image="img", command=["x"], accelerator=Accelerator("h100", count=8),
        nodes=2, namespace="research", queue="research", stateless=True, **fields,
    )  # fmt: skip


def test_a_spot_job_never_fits_an_on_demand_flavor_and_is_told_which_would() -> None:
    found = SETUP.preview(job(spot=True))
    assert found.verdict is Verdict.NEVER_FITS
    assert "flavor h100-standard of cluster queue research cannot hold these pods" in found.sentence
    assert "cloud.google.com/gke-spot=(unset), the pods ask true" in found.sentence
    taker = "Submit to queue research-spot of namespace research: it has quota in flavor h100-spot"
    assert taker in found.sentence  # the queue that takes it, by name (issue 36)
    assert SETUP.preview(job()).verdict is Verdict.FITS  # on-demand: the flavor it has


def test_compact_placement_never_fits_a_queue_without_topology() -> None:
    found = SETUP.preview(job(placement="compact"))
    assert found.verdict is Verdict.NEVER_FITS
    assert "it has no topology (spec.topologyName)" in found.sentence
    assert "No flavor of the cluster has such nodes" in found.sentence
    with_topology = ClusterSetup(
        capacity=[Capacity(accelerator=Accelerator("h100", count=8), topology=True)],
        teams=[Team(name="research", namespaces=["research"], quota={"h100": 32})],
    )
    assert with_topology.preview(job(placement="compact")).verdict is Verdict.FITS


def _recorded_workload() -> dict[str, Any]:
    with (RECORDINGS / "jobset-over-quota-pending.jsonl").open() as fh:
        events = [json.loads(line) for line in fh if line.strip()]
    workloads = [e["object"] for e in events if (e.get("object") or {}).get("kind") == "Workload"]
    return workloads[-1]


@needs_recordings
def test_a_request_beyond_the_maximum_never_says_wait_even_when_its_queue_is_unread() -> None:
    found = why_queued(_recorded_workload(), None, ())
    assert found.category is Category.QUOTA
    assert found.sentence.startswith("Never admitted: Kueue says couldn't assign flavors")
    assert (
        "(Kueue: ExceedsMaxQuota)" in found.sentence and "waiting does not help" in found.sentence
    )
    assert "Wait for running" not in found.sentence


def test_a_spot_job_lands_in_the_spot_flavor_of_a_queue_that_has_one() -> None:
    ordered = ClusterSetup(
        capacity=[
            Capacity(accelerator=Accelerator("h100", count=8), provisioning=["standard", "spot"])
        ],
        queues="ordered",
        teams=[Team(name="research", namespaces=["research"], quota={"h100": 32})],
    )
    found = ordered.preview(job(spot=True))
    assert found.verdict is Verdict.FITS and "in flavor h100-spot" in found.sentence


def test_a_spot_job_is_told_when_no_queue_of_its_namespace_would_take_it() -> None:
    from gkeml_sdk.runs.explain.inputs import QueueObjects
    from gkeml_sdk.runs.explain.preview import _elsewhere

    nobody = QueueObjects("research", "research", offers={"h100-standard": ("research",)})
    assert _elsewhere(["h100-spot"], nobody) == (
        "No queue of namespace research has quota in flavor h100-spot, which has such nodes: "
        "ask your admin for quota there"
    )
    unseen = QueueObjects("research", "research")  # a reader that did not see every queue
    assert _elsewhere(["h100-spot"], unseen).startswith("Use a queue with quota in flavor")
