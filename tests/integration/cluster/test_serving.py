"""Client.serve(): objects applied with the training client, readiness followed over watch
streams, the reason replicas are not ready, scale and delete. The test plays the Deployment
controller and the kubelet."""

from __future__ import annotations

import threading

import pytest

from gkeml_sdk import (
    Accelerator,
    Autoscaling,
    Client,
    KubernetesSettings,
    LocalSettings,
    ServeModel,
)
from gkeml_sdk.cli.main import main
from gkeml_sdk.errors import ClusterError, ConfigError, RunTimeoutError, SpecError
from gkeml_sdk.serving.readiness import ServingState
from gkeml_sdk.serving.routing import Routing


def small(**kw) -> ServeModel:
    return ServeModel(
        **{
            "name": "qa",
            "model": "Qwen/Qwen2.5-7B-Instruct",
            "accelerator": Accelerator("l4"),
            "replicas": 2,
            **kw,
        }
    )


def pod(name: str, waiting: str = "", ready: bool = False) -> dict:
    state = {"waiting": {"reason": waiting, "message": "back-off"}} if waiting else {"running": {}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "labels": {"gkeml.dev/serve": "qa"}},
        "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.10.0"}]},
        "status": {
            "phase": "Pending" if waiting else "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [
                {
                    "name": "server",
                    "image": "vllm/vllm-openai:v0.10.0",
                    "imageID": "",
                    "ready": ready,
                    "restartCount": 0,
                    "state": state,
                }
            ],
        },
    }


def roll_out(cluster, ready: int) -> None:
    dep = cluster.store.get("deployments", "ml", "qa")
    dep["status"] = {
        "observedGeneration": dep["metadata"]["generation"],
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": ready,
        "availableReplicas": ready,
    }
    cluster.store.put(dep)


def test_serve_applies_every_object_and_waits_until_ready(cluster, client):
    handle = client.serve(small())
    plurals = ("services", "deployments", "poddisruptionbudgets", "podmonitorings")
    kinds = sorted(o["kind"] for r in plurals for o in cluster.objects(r, "ml"))
    assert kinds == ["Deployment", "PodDisruptionBudget", "PodMonitoring", "Service"]
    assert handle.endpoint.startswith("http://qa.ml.svc.cluster.local:")
    seen = []
    pull_failure_shown = threading.Event()

    def progress(status) -> None:
        seen.append(status)
        if status.state is ServingState.IMAGE_PULL_FAILED:
            pull_failure_shown.set()

    def controllers() -> None:
        cluster.wait_for_watches(2)
        cluster.store.put(pod("qa-a", waiting="ImagePullBackOff"))
        roll_out(cluster, 0)
        # The image is fixed only once the user could see why nothing was ready.
        assert pull_failure_shown.wait(10)
        cluster.store.put(pod("qa-a", ready=True))
        cluster.store.put(pod("qa-b", ready=True))
        roll_out(cluster, 2)

    thread = threading.Thread(target=controllers, daemon=True)
    thread.start()
    final = handle.wait_ready(timeout=20, progress=progress)
    thread.join()
    assert final.ready and final.ready_replicas == 2
    assert ServingState.IMAGE_PULL_FAILED in [s.state for s in seen]


def test_wait_ready_times_out_with_the_reason(cluster, client):
    handle = client.serve(small())
    cluster.store.put(pod("qa-a", waiting="ImagePullBackOff"))
    roll_out(cluster, 0)
    with pytest.raises(RunTimeoutError, match="ImagePull"):
        handle.wait_ready(timeout=1)
    assert handle.status.state is ServingState.IMAGE_PULL_FAILED


def test_scale_and_delete(cluster, client):
    handle = client.serve(small())
    handle.scale(3)
    assert cluster.store.get("deployments", "ml", "qa")["spec"]["replicas"] == 3
    handle.delete()
    cluster.wait_for(
        lambda: (
            cluster.objects("deployments", "ml") == [] and cluster.objects("services", "ml") == []
        )
    )


def test_scaling_an_autoscaled_service_raises_its_floor_and_zero_stops_it(cluster, client):
    handle = client.serve(small(replicas=Autoscaling(min=1, max=3)))
    handle.scale(5)
    hpa = cluster.store.get("horizontalpodautoscalers", "ml", "qa")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (5, 5)
    handle.scale(0)
    cluster.wait_for(lambda: cluster.objects("horizontalpodautoscalers", "ml") == [])
    assert cluster.store.get("deployments", "ml", "qa")["spec"]["replicas"] == 0
    with pytest.raises(SpecError, match="scale"):
        handle.scale(-1)


def test_a_service_that_scales_to_zero_is_applied_with_its_keda_scaled_object(cluster, client):
    # Its ScaledObject was compiled but the client knew no REST path for it: serve() failed.
    zero = Autoscaling(min=0, max=3, queue_depth=4)
    handle = client.serve(small(replicas=zero, routing=Routing(via="istio")))
    scaled = cluster.store.get("scaledobjects", "ml", "qa")
    assert scaled["spec"]["scaleTargetRef"]["name"] == "qa"
    assert cluster.objects("horizontalpodautoscalers", "ml") == []
    handle.delete()
    cluster.wait_for(lambda: cluster.objects("scaledobjects", "ml") == [])


def test_missing_apis_and_the_local_backend_are_clear_errors(cluster, client, kube_api_factory):
    bare = kube_api_factory(exclude_crds=["monitoring.googleapis.com"])
    with pytest.raises(ConfigError, match=r"monitoring\.googleapis\.com/v1 is not served"):
        Client(kubernetes=KubernetesSettings(api_client=bare.api_client(), namespace="ml")).serve(
            small()
        )
    assert bare.objects("deployments", "ml") == []
    with pytest.raises(ConfigError, match="cannot serve models"):
        Client(local=LocalSettings(run_dir="/tmp/unused-gkeml-runs")).serve(small())


def test_cli_serve(cluster, tmp_path, capsys):
    kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    spec = tmp_path / "svc.yaml"
    spec.write_text(small().to_yaml().replace("name: qa", "kind: ServeModel\nname: qa", 1))
    assert main(["serve", str(spec), "--kubeconfig", kubeconfig]) == 0
    assert "qa: http://qa.ml.svc.cluster.local" in capsys.readouterr().out
    assert cluster.store.get("deployments", "ml", "qa") is not None


def test_the_issue_example_end_to_end(cluster, client):
    svc = ServeModel(
        name="chat",
        engine="vllm",
        model="meta-llama/Llama-3.1-70B-Instruct",
        accelerator=Accelerator("h100"),
        tensor_parallel="auto",
        max_model_len=8192,
        replicas=Autoscaling(min=1, max=4, queue_depth=5),
        hf_token_secret="hf-token",
    )
    assert "TP4" in str(svc.plan())
    handle = client.serve(svc)
    dep = cluster.store.get("deployments", "ml", "chat")
    dep["status"] = {"observedGeneration": dep["metadata"]["generation"], "replicas": 1,
                     "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}  # fmt: skip
    cluster.store.put(dep)
    assert handle.wait_ready(timeout=10).ready
    assert handle.endpoint == "http://chat.ml.svc.cluster.local:8000"
    handle.scale(3)
    assert cluster.store.get("horizontalpodautoscalers", "ml", "chat")["spec"]["minReplicas"] == 3


def test_serving_again_right_after_delete_waits_for_the_old_objects(cluster, client):
    handle = client.serve(small())
    old = cluster.store.get("deployments", "ml", "qa")
    # Its pods take their grace period: the Deployment stays terminating for a while.
    old["metadata"]["finalizers"] = ["test.gkeml.dev/hold"]
    cluster.store.put(old)
    handle.delete()

    def release() -> None:
        cluster.wait_for(lambda: cluster.store.get("deployments", "ml", "qa") is not None)
        threading.Event().wait(0.5)
        dying = cluster.store.get("deployments", "ml", "qa")
        dying["metadata"]["finalizers"] = []
        cluster.store.put(dying)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    client.serve(small())  # before the fix: applied onto the dying Deployment, then lost
    thread.join()
    new = cluster.store.get("deployments", "ml", "qa")
    assert new is not None and new["metadata"]["uid"] != old["metadata"]["uid"]
    assert "deletionTimestamp" not in new["metadata"]


def test_serving_never_applies_over_an_object_that_is_not_its_own(cluster, client):
    foreign = small(namespace="ml").compile().of_kind("Service")[0]
    foreign["metadata"]["labels"] = {"app": "someone-else"}
    stored = cluster.store.put(foreign)
    with pytest.raises(ClusterError, match=r"Service named 'qa'.*belongs to something other"):
        client.serve(small())
    after = cluster.store.get("services", "ml", "qa")
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
