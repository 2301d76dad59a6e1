"""serving_status(): why replicas of a model server are not ready, from object dicts shaped as
the API server returns them for the compiled Deployment/LeaderWorkerSet."""

from __future__ import annotations

import copy

import pytest

from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.readiness import ServingState, serving_status

S = ServingState


def compiled(multi_host: bool = False) -> dict:
    model = (
        "meta-llama/Llama-3.1-405B-Instruct" if multi_host else "meta-llama/Llama-3.1-70B-Instruct"
    )
    svc = ServeModel(
        name="chat", model=model, accelerator=Accelerator("h100"), replicas=2, hf_token_secret="hf"
    )
    return copy.deepcopy(svc.compile().main)


def deployment(ready: int = 0, updated: int = 2, available: int | None = None, **status) -> dict:
    obj = compiled()
    obj["metadata"]["generation"] = 3
    obj["status"] = {
        "observedGeneration": 3,
        "replicas": updated,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": ready if available is None else available,
        **status,
    }
    return obj


def pod(name: str = "chat-7d9f-abcde", phase: str = "Pending", **status) -> dict:
    template = compiled()["spec"]["template"]
    return {
        "metadata": {"name": name, "labels": template["metadata"]["labels"]},
        "spec": template["spec"],
        "status": {"phase": phase, **status},
    }


def container(**fields) -> dict:
    return {"name": "server", "image": "vllm/vllm-openai:v0.10.0", "restartCount": 0, **fields}


def test_all_ready():
    status = serving_status(deployment(ready=2), [])
    assert status.ready
    assert str(status) == "Ready: 2/2 replicas ready"


def test_scaled_to_zero_is_stopped_not_ready():
    obj = deployment()
    obj["spec"]["replicas"] = 0
    status = serving_status(obj, [])
    assert status.state is S.STOPPED and not status.ready


def test_image_pull():
    waiting = {"reason": "ErrImagePull", "message": "manifest for vllm/vllm-openai:v9 not found"}
    p = pod(containerStatuses=[container(state={"waiting": waiting})])
    status = serving_status(deployment(), [p])
    assert status.state is S.IMAGE_PULL_FAILED
    assert "cannot pull vllm/vllm-openai:v0.10.0: manifest for vllm/vllm-openai:v9 not found" in (
        status.message
    )
    assert status.message.startswith("0/2 replicas ready")


def test_no_gpu_of_that_type():
    scheduled = {
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
    }  # fmt: skip
    status = serving_status(deployment(), [pod(conditions=[scheduled])])
    assert status.state is S.UNSCHEDULABLE
    assert "no node carries cloud.google.com/gke-accelerator=nvidia-h100-80gb" in status.message


def test_not_enough_gpus():
    scheduled = {
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.",
    }  # fmt: skip
    status = serving_status(deployment(), [pod(conditions=[scheduled])])
    assert status.state is S.UNSCHEDULABLE
    assert "no node has 4 free nvidia.com/gpu of type nvidia-h100-80gb" in status.message


def test_out_of_memory_kill():
    oom = {"terminated": {"reason": "OOMKilled", "exitCode": 137}}
    waiting = {"waiting": {"reason": "CrashLoopBackOff"}}
    p = pod(
        phase="Running", containerStatuses=[container(state=waiting, lastState=oom, restartCount=3)]
    )
    status = serving_status(deployment(), [p])
    assert status.state is S.OUT_OF_MEMORY
    assert "3 restarts" in status.message


def test_crash_loop_points_at_gpu_memory_settings():
    crashed = {"terminated": {"reason": "Error", "exitCode": 1}}
    waiting = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}}
    p = pod(phase="Running", containerStatuses=[container(state=waiting, lastState=crashed)])
    status = serving_status(deployment(), [p])
    assert status.state is S.CRASHING
    assert "exits with code 1" in status.message
    assert "max_model_len" in status.message


def test_missing_token_secret():
    waiting = {"reason": "CreateContainerConfigError", "message": 'secret "hf" not found'}
    p = pod(containerStatuses=[container(state={"waiting": waiting})])
    status = serving_status(deployment(), [p])
    assert status.state is S.CONFIG_ERROR
    assert 'secret "hf" not found' in status.message


def test_waiting_for_kueue():
    p = pod()
    p["spec"] = {**p["spec"], "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}
    p["metadata"]["labels"] = {**p["metadata"]["labels"], "kueue.x-k8s.io/queue-name": "team-a"}
    status = serving_status(deployment(), [p])
    assert status.state is S.QUEUED
    assert "queue team-a" in status.message


def test_loading_the_model():
    running = container(state={"running": {"startedAt": "2026-01-01T00:00:00Z"}}, started=False)
    p = pod(phase="Running", containerStatuses=[running], conditions=[
        {"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"},
    ])  # fmt: skip
    status = serving_status(deployment(ready=1), [p])
    assert status.state is S.STARTING
    assert (
        status.message
        == "1/2 replicas ready; pod chat-7d9f-abcde is loading the model (startup probe)"
    )


def test_worst_pod_wins_and_ready_pods_are_ignored():
    ready = pod(
        "a",
        phase="Running",
        conditions=[{"type": "Ready", "status": "True"}],
        containerStatuses=[container(lastState={"terminated": {"exitCode": 1}})],
    )
    pulling = pod(
        "b", containerStatuses=[container(state={"waiting": {"reason": "ImagePullBackOff"}})]
    )
    creating = pod("c", conditions=[{"type": "PodScheduled", "status": "True"}])
    status = serving_status(deployment(ready=1), [creating, ready, pulling])
    assert status.state is S.IMAGE_PULL_FAILED
    assert "pod b" in status.message


def test_spot_reclaim():
    gone = pod(
        phase="Failed",
        reason="Terminated",
        message="Pod was terminated in response to imminent node shutdown.",
    )
    status = serving_status(deployment(ready=1), [gone])
    assert status.state is S.DISRUPTED
    assert "imminent node shutdown" in status.message


def test_rollout_states_without_pods():
    stale = deployment(ready=2)
    stale["metadata"]["generation"] = 4
    assert serving_status(stale, []).reason == "NotObserved"
    assert serving_status(deployment(ready=2, updated=1), []).state is S.ROLLING_OUT
    old = deployment(ready=2)
    old["status"]["replicas"] = 3
    assert "terminating" in serving_status(old, []).message
    deadline = deployment(
        conditions=[
            {
                "type": "Progressing",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": "timed out",
            }
        ]
    )
    assert serving_status(deadline, []).reason == "ProgressDeadlineExceeded"


def test_pods_cannot_be_created():
    failure = {
        "type": "ReplicaFailure",
        "status": "True",
        "reason": "FailedCreate",
        "message": "exceeded quota: gpu, requested: requests.nvidia.com/gpu=4",
    }
    status = serving_status(deployment(conditions=[failure]), [])
    assert status.state is S.CREATE_FAILED
    assert "exceeded quota" in status.message


@pytest.mark.parametrize(
    ("available", "ready", "state"), [("True", 2, S.READY), ("False", 1, S.ROLLING_OUT)]
)
def test_leader_worker_set(available, ready, state):
    lws = compiled(multi_host=True)
    lws["metadata"]["generation"] = 1
    lws["status"] = {
        "observedGeneration": 1, "readyReplicas": ready, "updatedReplicas": 2,
        "conditions": [{"type": "Available", "status": available}],
    }  # fmt: skip
    assert lws["kind"] == "LeaderWorkerSet"
    assert serving_status(lws, []).state is state
