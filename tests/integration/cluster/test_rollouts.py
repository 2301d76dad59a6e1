"""ServeHandle.update() on the test API server: a version whose pods never become ready is
rolled back to the last ready version at its deadline, with the reason recorded; a good
version completes; a canary takes its share through the Istio route and is judged on its
metrics. `DeploymentController` plays the Deployment controller and the kubelet one step at a
time, the clock is explicit, and each test checks the objects after every step."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, ServeModel
from gkeml_sdk.errors import SpecError
from gkeml_sdk.serving.rollout import Rollout
from gkeml_sdk.serving.rollout_machine import CanarySample, Phase
from gkeml_sdk.serving.routing import Routing
from tests.kubeapi.deployments import DeploymentController

GOOD, BROKEN, NEWER = (
    "vllm/vllm-openai:v0.10.0",
    "vllm/vllm-openai:v9-broken",
    "vllm/vllm-openai:v0.10.1",
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def spec(image: str, **kw) -> ServeModel:
    fields = {
        "name": "qa",
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "accelerator": Accelerator("l4"),
        "replicas": 2,
        "image": image,
        "rollout": Rollout(ready_deadline_seconds=600),
        **kw,
    }
    return ServeModel(**fields)


def crash_broken(pod: dict) -> str | None:
    return "CrashLoopBackOff" if pod["spec"]["containers"][0]["image"] == BROKEN else None


def images(cluster, prefix: str = "qa-") -> list[tuple[str, bool]]:
    pods = [p for p in cluster.objects("pods", "ml") if p["metadata"]["name"].startswith(prefix)]
    return sorted((p["spec"]["containers"][0]["image"], _ready(p)) for p in pods)


def _ready(pod: dict) -> bool:
    return any(c["status"] == "True" for c in pod["status"].get("conditions", []))


def deleted(obj: dict | None) -> bool:
    # The executor deletes in the foreground: the object may still be finishing.
    return obj is None or bool(obj["metadata"].get("deletionTimestamp"))


def deployment(cluster, name: str = "qa") -> dict:
    return cluster.store.get("deployments", "ml", name)


def served_ready(cluster, client, clock, first: ServeModel):
    handle = client.serve(first)
    kubelet = DeploymentController(cluster, ["ml"], crash_broken)
    kubelet.step()
    kubelet.step()
    assert images(cluster) == [(GOOD, True), (GOOD, True)]
    return handle, kubelet


def test_a_version_that_never_gets_ready_is_rolled_back_at_its_deadline(cluster, client):
    clock = Clock()
    handle, kubelet = served_ready(cluster, client, clock, spec(GOOD))
    executor = handle.update(spec(BROKEN), wait=False, clock=clock)
    dep = deployment(cluster)
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == BROKEN
    assert dep["metadata"]["annotations"]["gkeml.dev/version"] == "2"
    assert [v.outcome for v in handle.history()] == ["ready", "rolling-out"]

    kubelet.step()  # one surge pod of the new version; both old ones keep serving
    assert images(cluster) == [(GOOD, True), (GOOD, True), (BROKEN, False)]
    kubelet.step()  # it crash-loops
    clock.now += 599
    assert executor.step().phase is Phase.STARTING
    assert images(cluster) == [(GOOD, True), (GOOD, True), (BROKEN, False)]

    clock.now += 1  # the deadline: 600 s after the update began
    state = executor.step()
    assert state.phase is Phase.ROLLING_BACK
    dep = deployment(cluster)
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == GOOD
    assert dep["metadata"]["annotations"]["gkeml.dev/version"] == "1"

    kubelet.step()  # the restored template finds its old ReplicaSet; the surge pod goes
    assert images(cluster) == [(GOOD, True), (GOOD, True)]
    state = executor.step()
    assert state.phase is Phase.ROLLED_BACK and state.finished == 1600.0
    ready, failed = handle.history()
    assert (ready.version, ready.outcome) == (1, "ready")
    assert (failed.version, failed.outcome) == (2, "rolled-back")
    assert failed.reason.startswith("version 2 not ready within 600 s: ")
    assert "CrashLoopBackOff" in failed.reason
    cm = cluster.store.get("configmaps", "ml", "qa-versions")
    assert "rolled-back" in cm["data"]["versions.json"]


def test_a_good_version_completes_and_supersedes_the_last(cluster, client):
    clock = Clock()
    handle, kubelet = served_ready(cluster, client, clock, spec(GOOD))
    executor = handle.update(spec(NEWER), wait=False, clock=clock)
    seen = []
    for _ in range(8):
        kubelet.step()
        clock.now += 30
        state = executor.step()
        seen.append((images(cluster), state.phase))
        if state.done:
            break
    assert state.phase is Phase.COMPLETE
    # Surge one at a time: never fewer than 2 ready pods, never more than 3 pods.
    for pods, _ in seen:
        assert sum(ready for _, ready in pods) >= 2 and len(pods) <= 3
    assert images(cluster) == [(NEWER, True), (NEWER, True)]
    assert [(v.version, v.outcome) for v in handle.history()] == [(1, "superseded"), (2, "ready")]
    assert handle.svc.image == NEWER


def test_a_second_update_waits_for_the_first(cluster, client):
    clock = Clock()
    handle, _ = served_ready(cluster, client, clock, spec(GOOD))
    handle.update(spec(BROKEN), wait=False, clock=clock)
    with pytest.raises(SpecError, match="still rolling out"):
        handle.update(spec(NEWER), wait=False, clock=clock)


class Metrics:
    def __init__(self, sample: CanarySample) -> None:
        self.sample_value, self.asked = sample, []

    def sample(self, namespace: str, name: str, since: float) -> CanarySample:
        self.asked.append((namespace, name, since))
        return self.sample_value


def canary_spec(image: str) -> ServeModel:
    return spec(
        image,
        routing=Routing(via="istio"),
        rollout=Rollout(
            strategy="canary",
            canary_weight=10,
            analysis_seconds=300,
            ready_deadline_seconds=600,
            max_error_ratio=0.01,
        ),
    )


def weights(cluster) -> dict[str, int]:
    vs = cluster.store.get("virtualservices", "ml", "qa")
    route = vs["spec"]["http"][0]["route"]
    return {r["destination"]["host"].split(".")[0]: r["weight"] for r in route}


@pytest.mark.parametrize(
    ("sample", "outcome"),
    [(CanarySample(requests=400, errors=40), "rolled-back"), (CanarySample(400, 1), "ready")],
)
def test_a_canary_takes_its_share_and_is_judged_on_its_errors(cluster, client, sample, outcome):
    clock = Clock()
    handle, kubelet = served_ready(cluster, client, clock, canary_spec(GOOD))
    metrics = Metrics(sample)
    executor = handle.update(canary_spec(NEWER), wait=False, clock=clock, metrics=metrics)
    assert deployment(cluster, "qa-canary")["spec"]["replicas"] == 1
    assert deployment(cluster)["spec"]["template"]["spec"]["containers"][0]["image"] == GOOD
    assert weights(cluster) == {"qa": 100}

    kubelet.step()
    kubelet.step()  # the canary pod is ready
    assert executor.step().phase is Phase.ANALYSING
    assert weights(cluster) == {"qa": 90, "qa-canary": 10}

    clock.now += 300
    state = executor.step()
    assert metrics.asked == [("ml", "qa-canary", 1000.0)]
    if outcome == "rolled-back":
        assert state.phase is Phase.ROLLING_BACK
        assert "failed 40 of 400 requests (10.0% > max_error_ratio 1.0%)" in state.reason
        assert weights(cluster) == {"qa": 100}
        assert deleted(deployment(cluster, "qa-canary"))
        assert executor.step().phase is Phase.ROLLED_BACK
        assert handle.history()[-1].outcome == "rolled-back"
        return
    assert state.phase is Phase.PROMOTING
    assert deployment(cluster)["spec"]["template"]["spec"]["containers"][0]["image"] == NEWER
    assert weights(cluster) == {"qa": 90, "qa-canary": 10}
    for _ in range(8):
        kubelet.step()
        state = executor.step()
        if state.done:
            break
    assert state.phase is Phase.COMPLETE
    assert weights(cluster) == {"qa": 100}
    assert deleted(deployment(cluster, "qa-canary"))
    assert [v.outcome for v in handle.history()] == ["superseded", "ready"]


def test_by_default_the_canary_is_judged_on_its_engines_own_metrics(cluster, client):
    """No metrics source given: the executor reads each canary pod's /metrics through the
    pods proxy; vLLM's HTTP counter shows 5xx answers, so the canary is rolled back."""
    clock = Clock()
    handle, kubelet = served_ready(cluster, client, clock, canary_spec(GOOD))
    executor = handle.update(canary_spec(NEWER), wait=False, clock=clock)
    kubelet.step()
    kubelet.step()
    (pod,) = [
        p["metadata"]["name"]
        for p in cluster.objects("pods", "ml")
        if "canary" in p["metadata"]["name"]
    ]
    answered = {"ok": 0.0, "failed": 0.0}

    def engine(method: str, path: str, body: bytes):
        assert (method, path) == ("GET", "/metrics")
        text = (
            f'vllm:request_success_total{{finished_reason="stop"}} {answered["ok"]}\n'
            f'http_requests_total{{handler="/v1/chat/completions",method="POST",status="5xx"}} '
            f"{answered['failed']}\n"
        )
        return 200, text

    cluster.pod_proxy.serve("ml", pod, 8000, engine)
    assert executor.step().phase is Phase.ANALYSING
    clock.now += 10
    assert executor.step().phase is Phase.ANALYSING  # the first read is the baseline
    answered.update(ok=90.0, failed=30.0)
    clock.now += 10
    state = executor.step()
    assert state.phase is Phase.ROLLING_BACK
    assert "failed 30 of 120 requests (25.0% > max_error_ratio 1.0%)" in state.reason
    assert weights(cluster) == {"qa": 100}


def test_a_scaled_service_rolls_back_to_its_scaled_version(cluster, client):
    clock = Clock()
    handle, kubelet = served_ready(cluster, client, clock, spec(GOOD))
    handle.scale(3)
    kubelet.step()
    kubelet.step()
    assert [v.outcome for v in handle.history()] == ["serving", "serving"]
    executor = handle.update(spec(BROKEN, replicas=3), wait=False, clock=clock)
    assert [v.outcome for v in handle.history()] == ["serving", "ready", "rolling-out"]
    clock.now += 600
    assert executor.step().phase is Phase.ROLLING_BACK
    assert deployment(cluster)["spec"]["replicas"] == 3
    assert deployment(cluster)["metadata"]["annotations"]["gkeml.dev/version"] == "2"


def test_delete_during_a_canary_removes_the_canary_and_the_record(cluster, client):
    clock = Clock()
    handle, _ = served_ready(cluster, client, clock, canary_spec(GOOD))
    handle.update(canary_spec(NEWER), wait=False, clock=clock, metrics=Metrics(CanarySample(0, 0)))
    assert deployment(cluster, "qa-canary") is not None
    handle.delete()
    assert deleted(deployment(cluster, "qa-canary")) and deleted(deployment(cluster))
    assert deleted(cluster.store.get("configmaps", "ml", "qa-versions"))
