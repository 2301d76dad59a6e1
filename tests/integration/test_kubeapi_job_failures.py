"""The fake Job and JobSet controllers' failure decisions (tests/kubeapi/job_failures.py)
against what the real ones did in ../shared/fixtures/kueue-real: the recorded failed pod,
under the recorded Job's podFailurePolicy, gives the recorded Job Failed message, and the
recorded JobSet fails with the recorded reason; and the init-container and message-pattern
rules gkeml's bootstrap relies on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.kubeapi.job_failures import job_failure, jobset_failure_action, pod_failure_action
from tests.schemas import RECORDINGS

SCENARIO = RECORDINGS / "jobset-user-failure-after-restart.jsonl"


def events() -> list[dict[str, Any]]:
    if not SCENARIO.exists():
        pytest.skip(f"Kueue recordings not found at {SCENARIO.parent}")
    return [json.loads(line) for line in SCENARIO.read_text().splitlines()]


def test_a_recorded_failed_pod_gives_the_recorded_job_failure_message():
    recorded = events()
    pod = next(
        e["object"] for e in recorded
        if e["kind"] == "Pod" and (e["object"].get("status") or {}).get("phase") == "Failed"
    )  # fmt: skip
    job = next(
        e["object"] for e in recorded
        if e["kind"] == "Job" and any(c["type"] == "Failed" and pod["metadata"]["name"] in
                                      c["message"] for c in e["object"]["status"].get(
                                          "conditions") or [])
    )  # fmt: skip
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    action, message = pod_failure_action(job["spec"]["podFailurePolicy"], pod)
    assert (action, message) == ("FailJob", failed["message"])
    assert failed["reason"] == "PodFailurePolicy"


def test_the_recorded_jobset_fails_when_its_restarts_are_spent():
    recorded = events()
    jobsets = [e["object"] for e in recorded if e["kind"] == "JobSet"]
    final = jobsets[-1]
    failed = next(c for c in final["status"]["conditions"] if c["type"] == "Failed")
    # The JobSet as it was when its second Job failed: one restart counted.
    before = {**final, "status": {**final["status"], "conditions": []}}
    action, verdict = jobset_failure_action(before, "node", "PodFailurePolicy", "")
    assert verdict is not None
    assert (action, verdict[0]) == ("RestartJobSet", failed["reason"])
    assert failed["message"].startswith(verdict[1] + " (first failed job: ")
    fresh = {**before, "status": {"restarts": 0, "restartsCountTowardsMax": 0}}
    assert jobset_failure_action(fresh, "node", "PodFailurePolicy", "") == ("RestartJobSet", None)


def pod_with(init: list[tuple[str, int]], app: list[tuple[str, int]]) -> dict[str, Any]:
    def statuses(pairs: list[tuple[str, int]]) -> list[dict[str, Any]]:
        return [{"name": n, "state": {"terminated": {"exitCode": c}}} for n, c in pairs]

    return {
        "metadata": {"name": "p", "namespace": "ml"},
        "status": {
            "phase": "Failed",
            "initContainerStatuses": statuses(init),
            "containerStatuses": statuses(app),
        },
    }


BOOTSTRAP_RULE = {
    "action": "FailJob",
    "onExitCodes": {"containerName": "bootstrap", "operator": "In", "values": [3]},
}


def test_exit_code_rules_read_init_containers_after_app_containers_and_filter_by_name():
    policy = {"rules": [BOOTSTRAP_RULE]}
    assert pod_failure_action(policy, pod_with([("bootstrap", 3)], [])) == (
        "FailJob",
        "Container bootstrap for pod ml/p failed with exit code 3 matching FailJob rule at index 0",
    )
    assert pod_failure_action(policy, pod_with([("bootstrap", 0)], [("trainer", 3)])) == (
        "Count",
        "",
    )
    assert pod_failure_action(policy, pod_with([("bootstrap", 1)], []))[0] == "Count"
    not_zero = {"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [0]}}
    # Exit code 0 never matches, even NotIn [0]; the app container is looked at first.
    assert pod_failure_action({"rules": [not_zero]}, pod_with([("a", 0)], [("b", 0)]))[0] == "Count"
    assert "Container b " in pod_failure_action({"rules": [not_zero]},
                                               pod_with([("a", 2)], [("b", 1)]))[1]  # fmt: skip


def test_budgets_per_index_and_per_job():
    assert job_failure({"backoffLimitPerIndex": 2}, failures=9, index_failures=2) is None
    assert job_failure({"backoffLimitPerIndex": 2}, failures=3, index_failures=3) == (
        "FailedIndexes",
        "Job has failed indexes",
    )
    assert job_failure({"backoffLimit": 0}, failures=1, index_failures=1)[0] == (
        "BackoffLimitExceeded"
    )
    assert job_failure({}, failures=6, index_failures=6) is None  # the default limit is 6


def test_jobset_rules_need_reason_pattern_and_target_to_match():
    rule = {
        "name": "r",
        "action": "FailJobSet",
        "onJobFailureReasons": ["PodFailurePolicy"],
        "onJobFailureMessagePatterns": ["^Container bootstrap for pod "],
        "targetReplicatedJobs": ["node"],
    }
    jobset = {"spec": {"failurePolicy": {"maxRestarts": 3, "rules": [rule]}}, "status": {}}
    message = "Container bootstrap for pod ml/p failed with exit code 3 matching FailJob rule"
    assert jobset_failure_action(jobset, "node", "PodFailurePolicy", message)[0] == "FailJobSet"
    assert jobset_failure_action(jobset, "node", "PodFailurePolicy", "Container trainer")[1] is None
    assert jobset_failure_action(jobset, "other", "PodFailurePolicy", message)[1] is None
    assert jobset_failure_action(jobset, "node", "BackoffLimitExceeded", message)[1] is None
    assert jobset_failure_action({"spec": {}}, "node", "X", "")[1] == (
        "FailedJobs",
        "jobset failed due to one or more job failures",
    )
