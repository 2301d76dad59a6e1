"""Whose Events explain reads: the Workload, the ProvisioningRequests and at most
`EVENT_PODS` pods that are not healthy (ready and running, or succeeded)."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.backends.kubernetes.explain.diagnosis import EVENT_PODS, _subjects


def pod(name: str, phase: str, ready: bool | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if ready is not None:
        status["containerStatuses"] = [{"name": "main", "ready": ready}]
    return {"metadata": {"name": name}, "status": status}


def test_only_pods_that_are_not_healthy_are_read_and_no_more_than_the_cap() -> None:
    healthy = [pod("ready", "Running", ready=True), pod("done", "Succeeded")]
    troubled = [pod("starting", "Running", ready=False), pod("failed", "Failed"),
                pod("no-status", "Running")]  # fmt: skip
    troubled += [pod(f"pending-{i}", "Pending") for i in range(EVENT_PODS)]
    workload = {"metadata": {"name": "jobset-train-1"}}
    request = {"metadata": {"name": "jobset-train-1-dws-1"}}
    about = _subjects(workload, healthy + troubled, [request])
    assert about[:2] == [
        ("Workload", "jobset-train-1"),
        ("ProvisioningRequest", "jobset-train-1-dws-1"),
    ]
    assert about[2:] == [("Pod", p["metadata"]["name"]) for p in troubled[:EVENT_PODS]]


def test_without_a_workload_only_the_pods_are_subjects() -> None:
    assert _subjects(None, [pod("p", "Pending")], []) == [("Pod", "p")]
