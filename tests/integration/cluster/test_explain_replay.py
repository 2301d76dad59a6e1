"""`run.explain()` on every recorded scenario of a real Kueue + JobSet control plane, replayed
onto the fake API server: the controllers' objects and Events up to a moment of the
recording, the ClusterQueue status Kueue would report for the Workloads then holding quota,
and the category and cause the explanation gives."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gkeml_sdk import Category, TrainingJob

from .conftest import make_client, queue
from .kueue_objects import END, gang, install, kueue_reports_usage
from .replay import FIXTURES, Replayer


@pytest.fixture
def kueue(cluster: Any) -> Any:
    return install(cluster)


# (scenario, job, replay until t, the jobs to submit (first is explained), category, words)
SCENARIOS = [
    ("job-succeeded", "single", END, [gang("single", 1)], Category.SUCCEEDED, ["completed"]),
    ("jobset-succeeded", "train", END, [gang("train")], Category.SUCCEEDED, ["AllJobsCompleted"]),
    ("jobset-cancelled-while-running", "train", END, [gang("train")], Category.CANCELLED,
     ["deleted"]),
    ("jobset-dws-provisioned-succeeded", "train", 2.0, [gang("train")],
     Category.CAPACITY_PROVISIONING, ["acc-dws", "jobset-train-bfb3f-acc-dws-1", "Pending"]),
    ("jobset-dws-provisioned-succeeded", "train", END, [gang("train")], Category.SUCCEEDED,
     ["completed"]),
    ("jobset-dws-provisioning-failed-deactivated", "train", 3.09, [gang("train")],
     Category.CAPACITY_PROVISIONING, ["acc-dws", "GCE out of resources", "retr"]),
    ("jobset-dws-provisioning-failed-deactivated", "train", END, [gang("train")],
     Category.DEACTIVATED, ["rejected", "GCE out of resources again", "acc-dws-2"]),
    ("jobset-missing-localqueue", "lost", END, [gang("lost", queue="no-such-queue")],
     Category.USER_ERROR, ["LocalQueue no-such-queue doesn't exist", "team-a"]),
    ("jobset-over-quota-pending", "huge", END, [gang("huge", nodes=4)], Category.QUOTA,
     ["32 nvidia.com/gpu", "at most 16"]),
    ("jobset-podsready-timeout-deactivated", "stuck", 31.0, [gang("stuck")], Category.PLACEMENT,
     ["PodsReady timeout"]),
    ("jobset-podsready-timeout-deactivated", "stuck", END, [gang("stuck")], Category.DEACTIVATED,
     ["2 times", "RequeuingLimitExceeded"]),
    ("jobset-preempted-requeued-succeeded", "low", 1.6,
     [gang("low", priority="acc-low"), gang("high", priority="acc-high")], Category.PREEMPTED,
     ["higher-priority", "InClusterQueue"]),
    ("jobset-preempted-requeued-succeeded", "high", 1.51,
     [gang("high", priority="acc-high"), gang("low", priority="acc-low")], Category.QUOTA,
     ["16 of 16", "preempted lower-priority"]),
    ("jobset-preempted-requeued-succeeded", "low", END, [gang("low", priority="acc-low")],
     Category.SUCCEEDED, ["completed"]),
    ("jobset-queued-behind-another", "second", 2.0,
     [gang("second", nodes=1, gang=True), gang("first")], Category.QUOTA,
     ["16 of 16 nvidia.com/gpu", "needs 8", "acc-low"]),
    ("jobset-spot-disruption-succeeded", "train", 2.0, [gang("train", spot=True)],
     Category.PREEMPTED, ["disrupted", "TerminationByKubelet"]),
    ("jobset-spot-disruption-succeeded", "train", END, [gang("train", spot=True)],
     Category.SUCCEEDED, ["completed"]),
    ("jobset-user-failure-after-restart", "train", END, [gang("train", max_restarts=1)],
     Category.CRASH, ["ReachedMaxRestarts", "exited with code 1", "run.logs()"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("scenario", "job", "until", "jobs", "category", "words"),
    SCENARIOS,
    ids=[f"{s[0]}@{s[2]}-{s[1]}" for s in SCENARIOS],
)
def test_explain_names_the_cause_of_each_recorded_scenario(
    kueue: Any, scenario: str, job: str, until: float, jobs: list[TrainingJob],
    category: Category, words: list[str],
) -> None:  # fmt: skip
    client = make_client(kueue)
    if jobs[0].queue != "team-a":  # submitted while it existed, deleted since
        kueue.store.put(queue(jobs[0].queue))
    for spec in jobs:
        client.submit(spec)
    if jobs[0].queue != "team-a":
        kueue.store.delete("localqueues", "ml", jobs[0].queue)
    kinds = ("JobSet", "Job", "Workload", "Pod", "Event")
    for spec in jobs:
        Replayer(kueue, "ml", spec.name, 1, spec.name).play(
            scenario, spec.name, pause=0, until=until, kinds=kinds
        )
    kueue_reports_usage(kueue)
    explanation = client.get_run(job).explain()
    print(f"{scenario}@{until} {job}: [{explanation.category.value}] {explanation.sentence}")
    assert explanation.category is category, explanation.sentence
    for word in words:
        assert word in explanation.sentence
    assert explanation.evidence, "an explanation shows what it read"
    assert all(e.kind and e.name for e in explanation.evidence)


def test_a_queued_run_names_its_place_from_the_recorded_visibility_answer(kueue: Any) -> None:
    """Kueue's visibility API as recorded for the same moment, served by the test API server the
    way the aggregated API server answers: the sentence then says where the run waits."""
    path = FIXTURES / "jobset-queued-behind-another.pendingworkloads.json"
    if not path.is_file():
        pytest.skip(f"Kueue recordings not found at {FIXTURES}")
    recorded = json.loads(path.read_text())
    for item in recorded["items"]:
        item["metadata"]["namespace"] = "ml"
    kueue.serve_aggregated(
        "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ml/localqueues/team-a/pendingworkloads",
        recorded,
    )
    client = make_client(kueue)
    jobs = [gang("second", nodes=1, gang=True), gang("first")]
    for spec in jobs:
        client.submit(spec)
    for spec in jobs:
        Replayer(kueue, "ml", spec.name, 1, spec.name).play(
            "jobset-queued-behind-another", spec.name, pause=0, until=2.0,
            kinds=("JobSet", "Job", "Workload", "Pod", "Event"),
        )  # fmt: skip
    kueue_reports_usage(kueue)
    explanation = client.get_run("second").explain()
    print(explanation.sentence)
    assert explanation.category is Category.QUOTA
    assert explanation.sentence.startswith("Queued 1st in team-a"), explanation.sentence
