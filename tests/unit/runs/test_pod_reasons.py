"""Pod-level causes, with pods and Events shaped as the kubelet and kube-scheduler report them
(container `state`/`lastState`, `PodScheduled=False/Unschedulable`, Event `FailedScheduling`)."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Category
from gkeml_sdk.runs.explain.explain_run import explain_run
from gkeml_sdk.runs.explain.inputs import RunObjects

ADMITTED = {
    "kind": "Workload",
    "metadata": {"name": "jobset-train-1a2b3"},
    "spec": {"queueName": "team-a", "podSets": [{"name": "node", "count": 2}]},
    "status": {
        "admission": {"clusterQueue": "acc-cq"},
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
            {"type": "Admitted", "status": "True", "reason": "Admitted"},
            {"type": "PodsReady", "status": "False", "reason": "WaitForStart"},
        ],
    },
}
JOBSET = {"kind": "JobSet", "metadata": {"name": "train"}, "status": {"restarts": 0}}
SELECTOR = {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}


def pod(
    name: str = "train-node-0-0-x7k2p", phase: str = "Pending", **status: Any
) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"nodeSelector": SELECTOR},
        "status": {"phase": phase, **status},
    }


def container(**fields: Any) -> dict[str, Any]:
    return {
        "name": "trainer",
        "image": "us-docker.pkg.dev/p/r/train:v2",
        "ready": False,
        "restartCount": 0,
        **fields,
    }


def event(about: str, reason: str, message: str, kind: str = "Pod") -> dict[str, Any]:
    return {
        "kind": "Event",
        "type": "Warning",
        "reason": reason,
        "message": message,
        "involvedObject": {"kind": kind, "name": about, "namespace": "ml"},
        "metadata": {"name": f"{about}.18ec8a9", "creationTimestamp": "2026-11-29T14:32:03Z"},
        "lastTimestamp": "2026-11-29T14:32:03Z",
        "source": {"component": "default-scheduler"},
    }


def explain(*pods: dict[str, Any], events: tuple[dict[str, Any], ...] = (), job: Any = JOBSET):
    return explain_run(RunObjects("JobSet", "train", job, ADMITTED, pods, events))


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (
            "ErrImagePull",
            "rpc error: code = NotFound desc = failed to pull and unpack image "
            '"us-docker.pkg.dev/p/r/train:v2": failed to resolve reference '
            '"us-docker.pkg.dev/p/r/train:v2": us-docker.pkg.dev/p/r/train:v2: not found',
        ),
        ("ImagePullBackOff", 'Back-off pulling image "us-docker.pkg.dev/p/r/train:v2"'),
    ],
)
def test_an_image_that_cannot_be_pulled(reason: str, message: str) -> None:
    stuck = pod(
        containerStatuses=[container(state={"waiting": {"reason": reason, "message": message}})]
    )
    found = explain(stuck, events=(event(stuck["metadata"]["name"], "Failed", message),))
    assert found.category is Category.IMAGE
    assert "cannot pull image us-docker.pkg.dev/p/r/train:v2" in found.sentence
    assert reason in found.sentence and "Artifact Registry" in found.sentence
    assert any(e.reason == reason for e in found.evidence)


def test_oom_killed_with_restart_policy_never_fails_the_run() -> None:
    killed = pod(
        phase="Failed",
        containerStatuses=[
            container(
                state={
                    "terminated": {
                        "exitCode": 137,
                        "reason": "OOMKilled",
                        "startedAt": "2026-11-29T14:32:05Z",
                        "finishedAt": "2026-11-29T14:40:11Z",
                    }
                }
            )
        ],
    )
    failed = dict(
        JOBSET,
        status={
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "FailJobSetFailurePolicyAction",
                    "message": "failed",
                }
            ]
        },
    )
    found = explain(killed, job=failed)
    assert found.category is Category.CRASH
    assert "ran out of memory" in found.sentence and "OOMKilled (exit code 137)" in found.sentence
    assert "memory=" in found.sentence
    assert found.sentence.startswith("Failed:")


def test_oom_killed_in_a_crash_loop() -> None:
    looping = pod(
        phase="Running",
        containerStatuses=[
            container(
                state={
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": "back-off 40s restarting "
                        "failed container=trainer pod=train-node-0-0-x7k2p_ml(4c1d)",
                    }
                },
                lastState={"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                restartCount=3,
            )
        ],
    )
    found = explain(looping)
    assert found.category is Category.CRASH
    assert "OOMKilled" in found.sentence and "CrashLoopBackOff" in found.sentence


def test_a_crash_loop_names_the_exit_code_and_the_logs() -> None:
    looping = pod(
        phase="Running",
        containerStatuses=[
            container(
                state={
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": "back-off 20s restarting "
                        "failed container=trainer pod=train-node-0-0-x7k2p_ml(4c1d)",
                    }
                },
                lastState={"terminated": {"exitCode": 1, "reason": "Error"}},
                restartCount=2,
            )
        ],
    )
    found = explain(looping)
    assert found.category is Category.CRASH
    assert "exits with code 1" in found.sentence and "run.logs()" in found.sentence


UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}


def test_not_enough_gpus_on_any_node() -> None:
    message = (
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes "
        "are available: 3 No preemption victims found for incoming pod."
    )
    waiting = pod(conditions=[dict(UNSCHEDULABLE, message=message)])
    found = explain(
        waiting, events=(event(waiting["metadata"]["name"], "FailedScheduling", message),)
    )
    assert found.category is Category.PLACEMENT
    assert "no node has enough free nvidia.com/gpu: 0/3" in found.sentence  # no stray "."
    assert "0/3 nodes are available: 3 Insufficient nvidia.com/gpu" in found.sentence
    assert "preemption:" not in found.sentence  # the scheduler's own preemption is noise here
    assert any(e.reason == "FailedScheduling" for e in found.evidence)


def test_a_gpu_type_no_node_has() -> None:
    message = (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
    waiting = pod(conditions=[dict(UNSCHEDULABLE, message=message)])
    found = explain(
        waiting, events=(event(waiting["metadata"]["name"], "FailedScheduling", message),)
    )
    assert found.category is Category.PLACEMENT
    assert "cloud.google.com/gke-accelerator=nvidia-h100-80gb" in found.sentence
    assert "node pool" in found.sentence


def test_a_missing_secret_is_the_users_to_fix() -> None:
    stuck = pod(
        containerStatuses=[
            container(
                state={
                    "waiting": {
                        "reason": "CreateContainerConfigError",
                        "message": 'secret "hf-token" not found',
                    }
                }
            )
        ]
    )
    found = explain(stuck)
    assert found.category is Category.USER_ERROR and 'secret "hf-token" not found' in found.sentence


def test_healthy_pods_are_running_and_pods_being_deleted_say_nothing() -> None:
    ready = {"type": "Ready", "status": "True"}
    up = [pod(f"train-node-0-{i}-a", phase="Running", conditions=[ready]) for i in (0, 1)]
    gone = pod("old", containerStatuses=[container(state={"waiting": {"reason": "ErrImagePull"}})])
    gone["metadata"]["deletionTimestamp"] = "2026-11-29T14:32:03Z"
    found = explain(*up, gone)
    assert found.category is Category.RUNNING and "all 2 pods are ready" in found.sentence


def test_an_unknown_shape_is_reported_not_raised() -> None:
    odd = explain_run(
        RunObjects(
            "JobSet",
            "train",
            JOBSET,
            {
                "kind": "Workload",
                "status": {
                    "conditions": [
                        {
                            "type": "QuotaReserved",
                            "status": "False",
                            "reason": "SomethingNew",
                            "message": "a reason from a future Kueue",
                        }
                    ]
                },
            },
        )
    )
    assert "a reason from a future Kueue" in odd.sentence
    broken = explain_run(RunObjects("JobSet", "train", JOBSET, {"status": {"conditions": "?"}}))
    assert broken.category is Category.UNKNOWN
