"""ServeModel.compile(): every engine x single/multi-host x autoscaling on/off against the real
schemas, determinism, and the details each object must carry."""

from __future__ import annotations

import itertools

import pytest

import tests.schemas
from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.serving import catalog as engines
from gkeml_sdk.serving.manifests import compile_serve
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.rollout import Autoscaling
from gkeml_sdk.serving.routing import Route, Routing

L70, L405 = "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-405B-Instruct"
# Kinds with no schema in ../shared/crds (GKE networking policies): checked by hand.
NO_SCHEMA = {"HealthCheckPolicy", "GCPBackendPolicy"}


def spec(engine: str, multi_host: bool, autoscale: bool, **changes: object) -> ServeModel:
    fields: dict[str, object] = {
        "name": "chat",
        "engine": engine,
        "model": L405 if multi_host else L70,
        "accelerator": Accelerator("h100"),
        "hf_token_secret": "hf-token",
        "namespace": "serving",
        "replicas": Autoscaling(min=2, max=6, queue_depth=5) if autoscale else 2,
    }
    if engine == "triton":
        fields.update(tensor_parallel=8, pipeline_parallel=2 if multi_host else 1)
        fields["model_repository"] = "gs://engines/llama"
    fields.update(changes)
    return ServeModel(**fields)


MATRIX = list(itertools.product(engines.engine_names(), [False, True], [False, True]))


def validate_all(objects: list[dict]) -> None:
    for obj in objects:
        if obj["kind"] not in NO_SCHEMA:
            tests.schemas.validate_object(obj)


@pytest.mark.parametrize(("engine", "multi_host", "autoscale"), MATRIX)
def test_matrix_compiles_to_schema_valid_objects(engine, multi_host, autoscale):
    if multi_host and engines.engine(engine).multi_host is None:
        # TGI has no pipeline parallelism; Triton across nodes needs an MPI-over-SSH image.
        with pytest.raises(SpecError, match=r"over 2 nodes|on nodes of 8|needs"):
            spec(engine, multi_host, autoscale)
        return
    manifests = spec(engine, multi_host, autoscale).compile()
    kinds = [o["kind"] for o in manifests.objects]
    main = "LeaderWorkerSet" if multi_host else "Deployment"
    expected = ["Service", "PodMonitoring", "PodDisruptionBudget"]
    expected += ["HorizontalPodAutoscaler"] if autoscale else []
    assert kinds == [*expected, main]
    assert manifests.main["kind"] == main
    validate_all(manifests.objects)


@pytest.mark.parametrize(("engine", "multi_host", "autoscale"), MATRIX)
def test_compile_is_deterministic(engine, multi_host, autoscale):
    try:
        svc = spec(engine, multi_host, autoscale)
    except SpecError:
        return  # covered above
    assert svc.compile().to_yaml() == ServeModel.from_yaml(svc.to_yaml()).compile().to_yaml()


def test_schema_check_rejects_a_broken_object():
    deployment = spec("vllm", False, False).compile().main
    deployment["spec"]["template"]["spec"]["containers"][0]["gpus"] = 4
    with pytest.raises(AssertionError):
        tests.schemas.validate_object(deployment)


def pod_spec(obj: dict, template: str = "template") -> dict:
    if obj["kind"] == "LeaderWorkerSet":
        return obj["spec"]["leaderWorkerTemplate"][template]["spec"]
    return obj["spec"]["template"]["spec"]


def test_deployment_pod_essentials():
    m = spec(
        "vllm", False, False, spot=True, queue="team-a", priority_class="serving-gold"
    ).compile()
    dep = m.main
    pod = pod_spec(dep)
    (server,) = pod["containers"]
    assert dep["spec"]["replicas"] == 2
    assert dep["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert all("kueue.x-k8s.io/queue-name" not in o["metadata"]["labels"] for o in m.objects[:-1])
    assert pod["enableServiceLinks"] is False
    assert pod["priorityClassName"] == "serving-gold"
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "cloud.google.com/gke-spot": "true",
    }
    assert {t["key"] for t in pod["tolerations"]} == {"nvidia.com/gpu", "cloud.google.com/gke-spot"}
    assert pod["topologySpreadConstraints"][0]["topologyKey"] == "topology.kubernetes.io/zone"
    assert {"name": "dshm", "emptyDir": {"medium": "Memory"}} in pod["volumes"]
    assert server["command"] == ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    assert server["resources"]["limits"] == {"nvidia.com/gpu": 4}
    token = {"secretKeyRef": {"name": "hf-token", "key": "hf_api_token"}}
    assert {"name": "HF_TOKEN", "valueFrom": token} in server["env"]
    assert all("value" not in e for e in server["env"] if "TOKEN" in e["name"])
    assert server["startupProbe"]["failureThreshold"] * 10 >= 900  # 141 GB to download
    assert server["livenessProbe"]["httpGet"]["path"] == "/health"
    assert any(n.startswith("Spot:") for n in m.notes)


def test_vllm_args_state_every_default_explicitly():
    args = pod_spec(spec("vllm", False, False, served_model_name="llama-70b").compile().main)[
        "containers"
    ][0]["args"]
    text = " ".join(args)
    assert "--model meta-llama/Llama-3.1-70B-Instruct --served-model-name llama-70b" in text
    for flag in (
        "--tensor-parallel-size 4", "--max-model-len 8192", "--gpu-memory-utilization 0.9",
        "--max-num-seqs 256", "--dtype bfloat16", "--enable-prefix-caching", "--port 8000",
    ):  # fmt: skip
        assert flag in text
    assert "--pipeline-parallel-size" not in text


def test_tgi_args():
    m = spec("tgi", False, False, quantization="fp8", max_model_len=4096).compile()
    args = " ".join(pod_spec(m.main)["containers"][0]["args"])
    assert args.startswith("--json-output --model-id meta-llama/Llama-3.1-70B-Instruct")
    assert "--num-shard 2" in args
    assert "--max-total-tokens 4096 --max-input-tokens 4095" in args
    assert "--quantize fp8" in args
    assert "--dtype" not in args  # TGI refuses --dtype together with --quantize
    assert any("maintenance mode" in n for n in m.notes)


def test_triton_launches_one_rank_per_gpu():
    m = spec("triton", False, True).compile()
    server = pod_spec(m.main)["containers"][0]
    assert server["command"] == ["mpirun", "--allow-run-as-root"]
    args = server["args"]
    assert args.count("tritonserver") == 8
    assert args.count(":") == 7
    assert "--model-repository=/models/llama" in args
    assert args.count("--load-model=tensorrt_llm") == 7  # ranks > 0 only
    assert "--backend-config=python,shm-region-prefix-name=prefix7_" in args
    assert [p["containerPort"] for p in server["ports"]] == [8000, 8001, 8002]
    assert server["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert server["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    assert pod_spec(m.main)["volumes"][-1]["csi"]["volumeAttributes"]["bucketName"] == "engines"
    assert m.main["spec"]["template"]["metadata"]["annotations"] == {"gke-gcsfuse/volumes": "true"}
    monitoring = m.of_kind("PodMonitoring")[0]
    assert monitoring["spec"]["endpoints"][0]["port"] == "metrics"
    hpa = m.of_kind("HorizontalPodAutoscaler")[0]
    metric = hpa["spec"]["metrics"][0]["pods"]["metric"]["name"]
    assert metric == "prometheus.googleapis.com|nv_inference_pending_request_count|gauge"
    service_ports = [p["port"] for p in m.of_kind("Service")[0]["spec"]["ports"]]
    assert service_ports == [8000, 8001]


def test_triton_batch_size_scaling_uses_a_labelled_external_metric():
    m = spec("triton", False, True, replicas=Autoscaling(max=3, batch_size=16)).compile()
    (metric,) = m.of_kind("HorizontalPodAutoscaler")[0]["spec"]["metrics"]
    assert metric["type"] == "External"
    assert metric["external"]["metric"]["selector"] == {
        "matchLabels": {"metric.labels.request_type": "scheduled"}
    }
    assert any("not verified" in n for n in m.notes)
    tests.schemas.validate_object(m.of_kind("HorizontalPodAutoscaler")[0])


def test_leader_worker_set():
    m = spec("vllm", True, True).compile()
    lws = m.main
    group = lws["spec"]["leaderWorkerTemplate"]
    assert "replicas" not in lws["spec"]  # the HPA owns it
    assert group["size"] == 2
    assert group["restartPolicy"] == "RecreateGroupOnPodRestart"
    leader = pod_spec(lws, "leaderTemplate")["containers"][0]
    worker = pod_spec(lws, "workerTemplate")["containers"][0]
    assert leader["command"] == worker["command"] == ["bash", "-c"]
    assert "--ray_cluster_size=$(LWS_GROUP_SIZE); exec python3 -m" in leader["args"][0]
    assert "--tensor-parallel-size 8 --pipeline-parallel-size 2" in leader["args"][0]
    assert "--distributed-executor-backend ray" in leader["args"][0]
    assert "--ray_address=$(LWS_LEADER_ADDRESS)" in worker["args"][0]
    assert "readinessProbe" in leader and "readinessProbe" not in worker
    assert leader["resources"]["limits"] == worker["resources"]["limits"] == {"nvidia.com/gpu": 8}
    affinity = pod_spec(lws, "workerTemplate")["affinity"]["podAffinity"]
    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"][0]["matchLabelKeys"] == [
        "leaderworkerset.sigs.k8s.io/group-key"
    ]
    leader_only = {"gkeml.dev/serve": "chat", "gkeml.dev/role": "leader"}
    assert m.of_kind("Service")[0]["spec"]["selector"] == leader_only
    assert m.of_kind("PodMonitoring")[0]["spec"]["selector"]["matchLabels"] == leader_only
    assert m.of_kind("PodDisruptionBudget")[0]["spec"]["selector"]["matchLabels"] == {
        "gkeml.dev/serve": "chat"
    }
    hpa = m.of_kind("HorizontalPodAutoscaler")[0]["spec"]
    assert hpa["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "name": "chat"
    }  # fmt: skip
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 6)


def test_shell_quotes_user_arguments_in_the_leader_script():
    m = spec("vllm", True, False, extra_args=["--chat-template", "/t/a b.jinja"]).compile()
    leader = pod_spec(m.main, "leaderTemplate")["containers"][0]
    assert "--chat-template '/t/a b.jinja'" in leader["args"][0]


def test_inference_gateway_routing():
    routing = Routing(
        via="inference-gateway", gateway="infra/inference-gw",
        routes=[Route(model="llama-70b", backends={"chat": 90, "chat-canary": 10})],
    )  # fmt: skip
    m = spec("vllm", False, False, routing=routing).compile()
    pool = m.of_kind("InferencePool")[0]
    tests.schemas.validate_object(pool)
    assert pool["spec"]["targetPorts"] == [{"number": 8000}]
    assert pool["spec"]["endpointPickerRef"] == {
        "name": "chat-epp", "port": {"number": 9002}, "failureMode": "FailOpen"
    }  # fmt: skip
    labels = m.main["spec"]["template"]["metadata"]["labels"]
    assert labels["inference.networking.k8s.io/engine-type"] == "vllm"
    route = m.of_kind("HTTPRoute")[0]
    assert route["apiVersion"] == "gateway.networking.k8s.io/v1"
    assert route["spec"]["parentRefs"] == [{"name": "inference-gw", "namespace": "infra"}]
    (rule,) = route["spec"]["rules"]
    assert rule["matches"][0]["headers"] == [
        {"type": "Exact", "name": "X-Gateway-Base-Model-Name", "value": "llama-70b"}
    ]
    assert [(b["name"], b["weight"], b["kind"]) for b in rule["backendRefs"]] == [
        ("chat", 90, "InferencePool"),
        ("chat-canary", 10, "InferencePool"),
    ]
    backend = m.of_kind("GCPBackendPolicy")[0]["spec"]
    assert backend["default"]["timeoutSec"] == 600
    assert backend["targetRef"] == {
        "group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "chat"
    }  # fmt: skip
    health = m.of_kind("HealthCheckPolicy")[0]["spec"]["default"]["config"]
    assert health["httpHealthCheck"] == {"requestPath": "/health", "port": 8000}
    validate_all(m.objects)


def test_backend_only_writes_just_the_target():
    m = spec("vllm", False, False, routing=Routing(via="istio", backend_only=True)).compile()
    assert [o["kind"] for o in m.objects if o["apiVersion"].startswith("networking.istio")] == [
        "DestinationRule"
    ]


def test_istio_routing_with_weights():
    routing = Routing(
        via="istio", gateway="serving/llm-ingress", retries=2, timeout_seconds=900,
        routes=[
            Route(model="llama-70b", backends={"chat": 1, "chat-v2": 1, "chat-v3": 1}),
            Route(model="llama-8b", backends={"small": 100}),
        ],
    )  # fmt: skip
    m = spec("vllm", False, False, routing=routing).compile()
    validate_all(m.objects)
    dr = m.of_kind("DestinationRule")[0]["spec"]
    assert dr["host"] == "chat.serving.svc.cluster.local"
    assert dr["trafficPolicy"]["outlierDetection"]["maxEjectionPercent"] == 100
    vs = m.of_kind("VirtualService")[0]["spec"]
    assert vs["gateways"] == ["serving/llm-ingress", "mesh"]
    first, second, default = vs["http"]
    assert first["match"] == [{"headers": {"x-model-name": {"exact": "llama-70b"}}}]
    assert [r["weight"] for r in first["route"]] == [34, 33, 33]
    assert first["route"][1]["destination"] == {
        "host": "chat-v2.serving.svc.cluster.local", "port": {"number": 8000}
    }  # fmt: skip
    assert first["retries"] == {
        "attempts": 2,
        "perTryTimeout": "900s",
        "retryOn": "connect-failure,refused-stream,reset,503",
    }
    assert second["route"][0]["destination"]["host"] == "small.serving.svc.cluster.local"
    assert "match" not in default and default["route"] == first["route"]


def test_replicas_zero_and_one_notes():
    assert any("stopped" in n for n in spec("vllm", False, False, replicas=0).compile().notes)
    assert any("one replica" in n for n in spec("vllm", False, False, replicas=1).compile().notes)


def test_every_object_is_in_the_namespace_and_labelled():
    m = spec("vllm", True, True, routing=Routing(via="istio"), labels={"team": "ml"}).compile()
    for obj in m.objects:
        assert obj["metadata"]["namespace"] == "serving"
        assert obj["metadata"]["labels"]["gkeml.dev/serve"] == "chat"
        assert obj["metadata"]["labels"]["team"] == "ml"


def test_compile_serve_is_what_the_method_returns():
    svc = spec("vllm", False, False)
    assert compile_serve(svc).to_yaml() == svc.compile().to_yaml()


@pytest.mark.parametrize(
    ("kind", "path", "bad"),
    [
        ("Deployment", ("spec", "template", "spec", "enableServiceLinks"), "no"),
        ("PodMonitoring", ("spec", "endpoints"), [{"path": "/metrics"}]),
        ("VirtualService", ("spec", "http"), [{"retries": {"attempts": 1, "retryTimes": 2}}]),
        ("DestinationRule", ("spec", "trafficPolicy", "loadBalancer", "simple"), "FASTEST"),
        ("InferencePool", ("spec", "targetPorts"), []),
        ("ScaledObject", ("spec", "triggers"), [{"metadata": {"query": "q"}}]),  # no type
        ("ScaledObject", ("spec", "scaleTargetRef", "name"), ""),
    ],
)
def test_schema_checks_reach_every_kind(kind, path, bad):
    to_istio = ("VirtualService", "DestinationRule", "ScaledObject")
    routing = Routing(via="istio") if kind in to_istio else None
    routing = Routing(via="inference-gateway") if kind == "InferencePool" else routing
    changes: dict[str, object] = {"routing": routing}
    if kind == "ScaledObject":
        changes["replicas"] = Autoscaling(min=0, max=4)
    obj = spec("vllm", False, False, **changes).compile().of_kind(kind)[0]
    tests.schemas.validate_object(obj)
    node = obj
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = bad
    with pytest.raises(AssertionError):
        tests.schemas.validate_object(obj)
