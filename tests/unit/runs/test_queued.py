"""A queued run's sentence: its place from Kueue's visibility API, the queue's numbers, the
jobs ahead of it and the priority that would help, from the recorded `second` Workload."""

from __future__ import annotations

import copy
import json
from typing import Any

from gkeml_sdk import Category
from gkeml_sdk.runs.explain.explain_run import explain_run
from gkeml_sdk.runs.explain.inputs import QueueObjects, RunObjects
from tests.schemas import RECORDINGS, needs_recordings

SCENARIO = "jobset-queued-behind-another"
pytestmark = needs_recordings


def recorded(until: float) -> dict[str, dict[str, Any]]:
    objects: dict[str, dict[str, Any]] = {}
    for line in (RECORDINGS / f"{SCENARIO}.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["t"] < until and event["kind"] == "Workload":
            objects[event["name"]] = event["object"]
    return objects


def cluster_queue(used: str) -> dict[str, Any]:
    gpu = [{"name": "nvidia.com/gpu", "nominalQuota": "16"}]
    return {"kind": "ClusterQueue", "metadata": {"name": "acc-cq"},
            "spec": {"cohortName": "ml", "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
                     "flavors": [{"name": "acc-flavor", "resources": gpu}]}]},
            "status": {"flavorsReservation": [{"name": "acc-flavor", "resources": [
                {"name": "nvidia.com/gpu", "total": used}]}]}}  # fmt: skip


def test_a_queued_run_names_its_place_the_jobs_ahead_and_the_way_out() -> None:
    workloads = recorded(2.0)
    second, first = workloads["jobset-second-3fbfa"], workloads["jobset-first-e3cac"]
    ahead = []
    for n in (1, 2):  # two more pending workloads created before `second`
        other = copy.deepcopy(second)
        other["metadata"].update(name=f"jobset-early-{n}", creationTimestamp="2026-11-29T14:35:00Z")
        ahead.append(other)
    pending = json.loads((RECORDINGS / f"{SCENARIO}.pendingworkloads.json").read_text())
    pending["items"][0]["positionInLocalQueue"] = 2
    member = dict(cluster_queue("16"), metadata={"name": "other-cq"})  # lends nothing: all used
    queues = QueueObjects(
        "team-a", "ml", {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "acc-cq"}},
        cluster_queue("16"), (member,), workloads=(first, second, *ahead),
        priority_classes={"acc-low": 100, "acc-high": 1000}, pending=pending,
    )  # fmt: skip
    found = explain_run(RunObjects("JobSet", "second", None, second, queues=queues))
    assert found.category is Category.QUOTA
    assert found.sentence == (
        "Queued 3rd in team-a: cluster queue acc-cq uses 16 of 16 nvidia.com/gpu (flavor "
        "acc-flavor) and cannot borrow enough from cohort ml (0 free there); the 2 jobs ahead "
        "need 8 nvidia.com/gpu each; this run needs 8. Wait for running workloads to finish, "
        "ask for fewer, or raise the priority (acc-low)."
    )
    assert any(e.reason == "WaitingForQuota" for e in found.evidence)
