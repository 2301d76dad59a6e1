"""`preview` against Kueue's own decisions: for every Workload of the real recordings, the
queue state just before it arrived (the Workloads then holding quota in acc-cq: 16 GPUs,
`withinClusterQueue: LowerPriority`, priorities acc-low 100 / acc-high 1000) must give the
verdict Kueue then reached (admitted at once, preempted another, waited, never admitted).
Borrowing, lending and reclaiming within a cohort, which no recording shows, follow Kueue's
documented semantics (https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gkeml_sdk import Verdict
from gkeml_sdk.runs.explain.inputs import QueueObjects
from gkeml_sdk.runs.explain.preview import preview
from tests.kueue_usage import flavors_reservation
from tests.schemas import RECORDINGS, needs_recordings

PRIORITIES = {"acc-low": 100, "acc-high": 1000}


def quota(nominal: str, **limits: str) -> list[dict[str, Any]]:
    return [
        {"name": "cpu", "nominalQuota": "64"},
        {"name": "nvidia.com/gpu", "nominalQuota": nominal, **limits},
    ]


def cluster_queue(name: str, nominal: str = "16", cohort: str = "", **spec: Any) -> dict[str, Any]:
    limits = spec.pop("limits", {})
    return {
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "nvidia.com/gpu"],
                    "flavors": [{"name": "acc-flavor", "resources": quota(nominal, **limits)}],
                }
            ],
            **({"cohortName": cohort} if cohort else {}),
            **spec,
        },
    }


def with_usage(cq: dict[str, Any], workloads: list[dict[str, Any]]) -> dict[str, Any]:
    """`status.flavorsReservation` as Kueue reports it for the Workloads holding quota."""
    reservation = flavors_reservation(cq["metadata"]["name"], workloads)
    return dict(cq, status={"flavorsReservation": reservation})


def recorded_arrivals() -> list[tuple[str, str, dict[str, Any], list[dict[str, Any]], str]]:
    """(scenario, workload, its first recorded form, the other Workloads just before it
    arrived, what Kueue did with it) for every Workload of every recording."""
    cases = []
    for path in sorted(RECORDINGS.glob("*.jsonl")):
        events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        workloads = [e for e in events if e["kind"] == "Workload"]
        for name in dict.fromkeys(e["name"] for e in workloads):
            first = next(i for i, e in enumerate(events) if e["name"] == name)
            before: dict[str, Any] = {}
            for e in events[:first]:
                if e["kind"] == "Workload":
                    before[e["name"]] = e["object"]
            cases.append(
                (
                    path.stem,
                    name,
                    events[first]["object"],
                    list(before.values()),
                    _kueue_did(events[first:], name),
                )
            )
    return cases


def _kueue_did(events: list[dict[str, Any]], name: str) -> str:
    """What Kueue decided for Workload `name`, read from what it wrote next."""
    for e in events:
        status = e["object"].get("status") or {}
        conds = {c["type"]: c for c in status.get("conditions") or []}
        preempted = conds.get("Preempted", {}).get("status") == "True"
        if e["kind"] == "Workload" and e["name"] != name and preempted:
            return f"preempts {e['name']}"
        if e["kind"] != "Workload" or e["name"] != name or "QuotaReserved" not in conds:
            continue
        reserved = conds["QuotaReserved"]
        if reserved["status"] == "True":
            return "fits"
        if reserved["reason"] in ("ExceedsMaxQuota", "Misconfigured", "Inadmissible"):
            return "never"
        return "waits"
    return "unknown"


ARRIVALS = recorded_arrivals()
EXPECTED = {"fits": Verdict.FITS, "never": Verdict.NEVER_FITS, "waits": Verdict.WAITS}


@needs_recordings
@pytest.mark.parametrize(
    ("scenario", "name", "workload", "before", "did"),
    ARRIVALS or [("none", "none", {}, [], "none")],  # without recordings: one case, skipped
    ids=[f"{a[0]}:{a[1]}" for a in ARRIVALS] or ["no-recordings"],
)
def test_preview_agrees_with_what_kueue_did(
    scenario: str, name: str, workload: dict[str, Any], before: list[dict[str, Any]], did: str
) -> None:
    lq_name = workload["spec"]["queueName"]
    exists = scenario != "jobset-missing-localqueue"
    cq_name = "acc-dws-cq" if "dws" in scenario else "acc-cq"
    queues = QueueObjects(
        lq_name,
        "ml",
        {"metadata": {"name": lq_name}, "spec": {"clusterQueue": cq_name}} if exists else None,
        with_usage(cluster_queue(cq_name), before),
        workloads=tuple(before),
        priority_classes=PRIORITIES,
        local_queues=("team-a",),
    )
    result = preview(workload, queues)
    print(f"{scenario}:{name} Kueue: {did}; preview: {result.verdict.value}: {result.sentence}")
    if did.startswith("preempts "):
        assert result.verdict is Verdict.PREEMPTS, result.sentence
        victim = did.removeprefix("preempts ")
        owner = next(w for w in before if w["metadata"]["name"] == victim)
        assert result.preempts == (owner["metadata"]["ownerReferences"][0]["name"],)
        assert "priority 100" in result.sentence
    else:
        assert result.verdict is EXPECTED[did], result.sentence
    if did == "waits":
        assert result.waits_for == 1 and "waits for 1 running workload" in result.sentence


@needs_recordings
def test_every_kind_of_decision_is_in_the_recordings() -> None:
    assert {did.split()[0] for *_, did in ARRIVALS} == {"fits", "never", "waits", "preempts"}


def gpus(count: int, priority: int = 0) -> dict[str, Any]:
    container = {"resources": {"requests": {"nvidia.com/gpu": str(count)}}}
    return {
        "spec": {
            "queueName": "team-a",
            "priority": priority,
            "podSets": [
                {"name": "node", "count": 1, "template": {"spec": {"containers": [container]}}}
            ],
        }
    }


def holding(name: str, cq: str, count: int, priority: int = 0, at: str = "T1") -> dict[str, Any]:
    return {
        "metadata": {"name": f"jobset-{name}-1", "ownerReferences": [{"name": name}]},
        "spec": {"priority": priority},
        "status": {
            "conditions": [{"type": "QuotaReserved", "status": "True", "lastTransitionTime": at}],
            "admission": {
                "clusterQueue": cq,
                "podSetAssignments": [
                    {
                        "flavors": {"nvidia.com/gpu": "acc-flavor"},
                        "resourceUsage": {"nvidia.com/gpu": str(count)},
                    }
                ],
            },
        },
    }


def cohort_state(
    mine: dict[str, Any], other: dict[str, Any], running: list[dict[str, Any]]
) -> QueueObjects:
    lq = {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "a"}}
    return QueueObjects(
        "team-a",
        "ml",
        lq,
        with_usage(mine, running),
        (with_usage(other, running),),
        workloads=tuple(running),
    )


def test_borrowing_from_an_idle_cohort_member() -> None:
    state = cohort_state(cluster_queue("a", "8", "ml"), cluster_queue("b", "8", "ml"), [])
    result = preview(gpus(12), state)
    assert result.verdict is Verdict.BORROWS
    assert "borrows 4 from cohort ml" in result.sentence


def test_a_borrowing_limit_caps_what_can_ever_fit() -> None:
    mine = cluster_queue("a", "8", "ml", limits={"borrowingLimit": "2"})
    state = cohort_state(mine, cluster_queue("b", "8", "ml"), [])
    assert preview(gpus(10), state).verdict is Verdict.BORROWS
    never = preview(gpus(12), state)
    assert never.verdict is Verdict.NEVER_FITS and "at most 10" in never.sentence


def test_a_lending_limit_keeps_part_of_the_other_queue() -> None:
    other = cluster_queue("b", "8", "ml", limits={"lendingLimit": "2"})
    state = cohort_state(cluster_queue("a", "8", "ml"), other, [])
    assert preview(gpus(10), state).verdict is Verdict.BORROWS
    assert preview(gpus(11), state).verdict is Verdict.NEVER_FITS


def test_reclaiming_nominal_quota_from_a_borrower() -> None:
    mine = cluster_queue("a", "8", "ml", preemption={"reclaimWithinCohort": "Any"})
    running = [holding("borrower", "b", 14)]  # b (nominal 8) borrows 6 of a's 8
    state = cohort_state(mine, cluster_queue("b", "8", "ml"), running)
    result = preview(gpus(8), state)
    assert result.verdict is Verdict.PREEMPTS and result.preempts == ("borrower",)
    never_reclaims = cohort_state(
        cluster_queue("a", "8", "ml"), cluster_queue("b", "8", "ml"), running
    )
    assert preview(gpus(8), never_reclaims).verdict is Verdict.WAITS


def test_preemption_picks_the_lowest_priority_and_only_as_many_as_needed() -> None:
    running = [
        holding("a1", "acc-cq", 8, 100, "T1"),
        holding("a2", "acc-cq", 4, 50, "T2"),
        holding("a3", "acc-cq", 4, 500, "T3"),
    ]
    lq = {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "acc-cq"}}
    state = QueueObjects(
        "team-a", "ml", lq, with_usage(cluster_queue("acc-cq"), running), workloads=tuple(running)
    )
    result = preview(gpus(4, priority=200), state)
    assert result.verdict is Verdict.PREEMPTS and result.preempts == ("a2",)
    result = preview(gpus(12, priority=200), state)
    assert result.preempts == ("a2", "a1")
    assert preview(gpus(4, priority=50), state).verdict is Verdict.WAITS


def test_no_flavor_with_the_accelerator_never_fits() -> None:
    cq = cluster_queue("acc-cq")
    flavors = {
        "acc-flavor": {"spec": {"nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-l4"}}}
    }
    lq = {"metadata": {"name": "team-a"}, "spec": {"clusterQueue": "acc-cq"}}
    job = gpus(8)
    job["spec"]["podSets"][0]["template"]["spec"]["nodeSelector"] = {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb"
    }
    result = preview(job, QueueObjects("team-a", "ml", lq, cq, flavors=flavors))
    assert result.verdict is Verdict.NEVER_FITS
    assert "cloud.google.com/gke-accelerator=nvidia-l4" in result.sentence
    bare = dict(
        cq,
        spec=dict(
            cq["spec"],
            resourceGroups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "acc-flavor", "resources": [{"name": "cpu", "nominalQuota": "64"}]}
                    ],
                }
            ],
        ),
    )
    result = preview(gpus(8), QueueObjects("team-a", "ml", lq, bare))
    assert result.verdict is Verdict.NEVER_FITS and "no quota for nvidia.com/gpu" in result.sentence
