"""Scale to zero (a KEDA ScaledObject in place of the HPA) and Spot with an on-demand floor (two
servers behind one Service, a PDB each): table tests against the KEDA CRD schema in
../shared/crds/keda, kubernetes-validate for built-in kinds, and the admission rules."""

from __future__ import annotations

import pytest

import tests.schemas
from gkeml_sdk import Accelerator, Autoscaling, ServeModel
from gkeml_sdk.errors import SpecError
from gkeml_sdk.serving.rollout import SpotMix
from gkeml_sdk.serving.routing import Routing

Q7, L405 = "Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-405B-Instruct"
NO_SCHEMA = {"HealthCheckPolicy", "GCPBackendPolicy"}


def make(**kw) -> ServeModel:
    fields = {"name": "chat", "model": Q7, "accelerator": Accelerator("l4"), "namespace": "ml"}
    return ServeModel(**{**fields, **kw})


def kinds_and_names(svc: ServeModel) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in svc.compile().objects]


ZERO = Autoscaling(min=0, max=4, queue_depth=3)
CASES = {
    "to zero behind istio": (
        {"replicas": ZERO, "routing": Routing(via="istio")},
        [("Service", "chat"), ("PodMonitoring", "chat"), ("PodDisruptionBudget", "chat"),
         ("ScaledObject", "chat"), ("DestinationRule", "chat"), ("VirtualService", "chat"),
         ("Deployment", "chat")],
    ),
    "to zero, multi-host": (
        {"replicas": ZERO, "routing": Routing(via="istio"), "model": L405,
         "accelerator": Accelerator("h100", count=8), "hf_token_secret": "hf"},
        [("Service", "chat"), ("PodMonitoring", "chat"), ("PodDisruptionBudget", "chat"),
         ("ScaledObject", "chat"), ("DestinationRule", "chat"), ("VirtualService", "chat"),
         ("LeaderWorkerSet", "chat")],
    ),
    "spot mix, fixed": (
        {"spot": SpotMix(on_demand_min=1), "replicas": 3},
        [("Service", "chat"), ("PodMonitoring", "chat"), ("PodDisruptionBudget", "chat-spot"),
         ("PodDisruptionBudget", "chat"), ("Deployment", "chat-spot"), ("Deployment", "chat")],
    ),
    "spot mix, HPA": (
        {"spot": SpotMix(on_demand_min=2), "replicas": Autoscaling(min=1, max=6)},
        [("Service", "chat"), ("PodMonitoring", "chat"), ("PodDisruptionBudget", "chat-spot"),
         ("PodDisruptionBudget", "chat"), ("HorizontalPodAutoscaler", "chat"),
         ("Deployment", "chat-spot"), ("Deployment", "chat")],
    ),
    "spot mix to zero, gateway": (
        {"spot": SpotMix(), "replicas": ZERO, "routing": Routing(via="inference-gateway")},
        [("Service", "chat"), ("PodMonitoring", "chat"), ("PodDisruptionBudget", "chat-spot"),
         ("PodDisruptionBudget", "chat"), ("ScaledObject", "chat"), ("InferencePool", "chat"),
         ("HealthCheckPolicy", "chat"), ("GCPBackendPolicy", "chat"), ("HTTPRoute", "chat"),
         ("Deployment", "chat-spot"), ("Deployment", "chat")],
    ),
    "spot mix, multi-host": (
        {"spot": SpotMix(), "replicas": 2, "model": L405,
         "accelerator": Accelerator("h100", count=8), "hf_token_secret": "hf"},
        [("Service", "chat"), ("PodMonitoring", "chat"), ("PodDisruptionBudget", "chat-spot"),
         ("PodDisruptionBudget", "chat"), ("LeaderWorkerSet", "chat-spot"),
         ("LeaderWorkerSet", "chat")],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_compiles_to_valid_objects(case):
    changes, expected = CASES[case]
    svc = make(**changes)
    assert kinds_and_names(svc) == expected
    for obj in svc.compile().objects:
        if obj["kind"] not in NO_SCHEMA:
            tests.schemas.validate_object(obj)
    assert svc.compile().to_yaml() == ServeModel.from_yaml(svc.to_yaml()).compile().to_yaml()


def test_scaled_object_reads_the_engine_queue_from_managed_prometheus():
    so = make(replicas=ZERO, routing=Routing(via="istio")).compile()
    so = so.of_kind("ScaledObject")[0]["spec"]
    assert so["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "chat"}
    assert (so["minReplicaCount"], so["maxReplicaCount"], so["cooldownPeriod"]) == (0, 4, 600)
    trigger = so["triggers"][0]
    assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
    assert trigger["metadata"] == {
        "serverAddress": "http://frontend.gmp-public.svc:9090",
        "query": 'sum(vllm:num_requests_waiting{namespace="ml",job="chat"})',
        "threshold": "3",
        "activationThreshold": "0",
    }
    scale_down = so["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    assert scale_down["stabilizationWindowSeconds"] == 600


def test_behind_istio_the_callers_requests_wake_it():
    so = make(replicas=ZERO, routing=Routing(via="istio")).compile().of_kind("ScaledObject")[0]
    wake = so["spec"]["triggers"][1]["metadata"]
    assert (
        "istio_requests_total" in wake["query"]
        and 'destination_service_name="chat"' in wake["query"]
    )
    assert (wake["threshold"], wake["activationThreshold"]) == ("1000000", "0")


def test_triton_queue_keeps_its_label_in_the_query():
    batch = Autoscaling(min=0, max=4, batch_size=2)
    svc = make(engine="triton", replicas=batch, tensor_parallel=1, pipeline_parallel=1,
               model="mistral-7b", model_repository="gs://bkt/m", hf_token_secret="hf",
               routing=Routing(via="istio"))  # fmt: skip
    query = svc.compile().of_kind("ScaledObject")[0]["spec"]["triggers"][0]["metadata"]["query"]
    label = dict(svc.engine_row.batch_metric.labels)
    assert label and all(f'{k}="{v}"' in query for k, v in label.items())


def test_notes_say_what_the_first_request_waits():
    svc = make(replicas=ZERO, routing=Routing(via="istio"))
    notes = " ".join(svc.compile().notes)
    assert f"about {svc.plan().expected_startup_seconds} s of model load" in notes


@pytest.mark.parametrize("routing", [None, Routing(via="inference-gateway")])
def test_scale_to_zero_that_nothing_would_wake_is_refused(routing):
    with pytest.raises(SpecError, match=r"Autoscaling\(min=0\).*routing=Routing\(via='istio'\)"):
        make(replicas=ZERO, routing=routing)
    # An on-demand floor keeps running, and its queue wakes the Spot part.
    make(replicas=ZERO, routing=routing, spot=SpotMix(on_demand_min=1))


def test_spot_mix_parts():
    svc = make(spot=SpotMix(on_demand_min=2), replicas=Autoscaling(min=1, max=6))
    objects = svc.compile()
    spot, floor = objects.of_kind("Deployment")
    assert objects.main is floor
    assert floor["spec"]["replicas"] == 2 and "replicas" not in spot["spec"]
    on_spot = spot["spec"]["template"]["spec"]["nodeSelector"]
    assert on_spot.get("cloud.google.com/gke-spot") == "true"
    assert "cloud.google.com/gke-spot" not in floor["spec"]["template"]["spec"]["nodeSelector"]
    for dep, part in ((spot, "spot"), (floor, "on-demand")):
        assert dep["spec"]["selector"]["matchLabels"]["gkeml.dev/capacity"] == part
        assert dep["spec"]["template"]["metadata"]["labels"]["gkeml.dev/capacity"] == part
    pdbs = {
        p["metadata"]["name"]: p["spec"]["selector"]["matchLabels"]
        for p in objects.of_kind("PodDisruptionBudget")
    }
    assert pdbs == {
        "chat-spot": {"gkeml.dev/serve": "chat", "gkeml.dev/capacity": "spot"},
        "chat": {"gkeml.dev/serve": "chat", "gkeml.dev/capacity": "on-demand"},
    }
    # One Service in front of both parts.
    assert objects.of_kind("Service")[0]["spec"]["selector"] == {"gkeml.dev/serve": "chat"}
    hpa = objects.of_kind("HorizontalPodAutoscaler")[0]
    assert hpa["spec"]["scaleTargetRef"]["name"] == "chat-spot"
    plan = svc.plan()
    assert plan.cost_per_hour() == pytest.approx(
        plan.cost_per_replica_hour("spot") * 1 + plan.cost_per_replica_hour("on-demand") * 2
    )


@pytest.mark.parametrize(
    ("changes", "field", "match"),
    [
        ({"spot": {"on_demand_min": 0}}, "spot", "all-Spot is spot=True"),
        ({"spot": SpotMix(), "name": "a" * 38}, "name", "too long for a Spot part"),
        ({"replicas": {"min": 0, "max": 0}}, "min", "max .at least 1."),
        ({"spot": SpotMix(), "accelerator": Accelerator("h100", count=1)}, None, "on-demand"),
    ],
)
def test_refusals(changes, field, match):
    with pytest.raises(SpecError, match=match) as err:
        make(**changes)
    if field:
        assert err.value.field == field
