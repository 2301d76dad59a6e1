"""The objects that watch and steer a server's requests: PodMonitoring, its autoscaler (an HPA,
or KEDA to scale to zero) and model-aware routing (GKE Inference Gateway or Istio).

Over 400 lines because monitoring, autoscaling and routing read the same engine metrics, ports
and pod selectors, and each object family is a few dicts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.rules import slug
from gkeml_sdk.serving import server_pod
from gkeml_sdk.serving.catalog import SERVICE_PORT, Metric
from gkeml_sdk.serving.rollout import MAX_TARGET, Autoscaling
from gkeml_sdk.serving.routing import Route, Routing
from gkeml_sdk.serving.sizing import Fit

if TYPE_CHECKING:
    from gkeml_sdk.serving.fields import ServeFields

SCRAPE_INTERVAL = "15s"
SCALE_DOWN_PERIOD_SECONDS = 300  # remove at most one replica per 5 minutes
POLLING_SECONDS = 15  # the GMP scrape interval: polling faster reads the same sample

POOL_GROUP = "inference.networking.k8s.io"
POOL_API = f"{POOL_GROUP}/v1"
GATEWAY_API = kinds.GATEWAY
GKE_NETWORKING_API = kinds.GKE_NETWORKING
ISTIO_API = kinds.ISTIO_NETWORKING
EPP_PORT = 9002
DEFAULT_GATEWAY = "inference-gateway"
GATEWAY_MODEL_HEADER = "X-Gateway-Base-Model-Name"  # set by the Body-Based Router
ISTIO_MODEL_HEADER = "x-model-name"  # Istio matches lower-case header names only
RETRY_ON = "connect-failure,refused-stream,reset,503"  # never retry a started generation


def pod_monitoring(svc: ServeFields, fit: Fit) -> Obj:
    """A `monitoring.googleapis.com/v1` PodMonitoring scraping the engine's metrics endpoint.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="t", engine="triton", model="mistral-7b",
        ...     accelerator=Accelerator("l4"), tensor_parallel=1, pipeline_parallel=1,
        ...     model_repository="gs://bkt/m", hf_token_secret="hf")
        >>> pod_monitoring(svc, svc.fit)["spec"]["endpoints"][0]["port"]
        'metrics'
    """
    eng = svc.engine_row
    endpoint = {"port": eng.metrics_port, "path": eng.metrics_path, "interval": SCRAPE_INTERVAL}
    return {
        "apiVersion": kinds.MANAGED_PROMETHEUS,
        "kind": "PodMonitoring",
        "metadata": server_pod.metadata(svc),
        "spec": {
            "selector": {"matchLabels": server_pod.serving_pods(svc, fit)},
            "endpoints": [endpoint],
        },
    }


def horizontal_pod_autoscaler(svc: ServeFields, fit: Fit, target_name: str = "") -> Obj:
    """An `autoscaling/v2` HPA on the engine gauge `svc.replicas` names, averaged per replica,
    through the GKE custom metrics path (https://cloud.google.com/kubernetes-engine/docs/
    best-practices/machine-learning/inference/autoscaling).

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk import Autoscaling
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), replicas=Autoscaling(max=3, queue_depth=2.5))
        >>> hpa = horizontal_pod_autoscaler(svc, svc.fit)
        >>> hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"]
        '2500m'
    """
    scaling = svc.autoscaling
    if scaling is None:
        raise ValueError(f"{svc.name}: replicas are fixed; there is nothing to autoscale")
    metric = svc.engine_row.scaling_metric(scaling.signal)
    target = server_kind(fit)
    spec: Obj = {
        "scaleTargetRef": {**target, "name": target_name or svc.name},
        "minReplicas": scaling.min,
        "maxReplicas": scaling.max,
        "metrics": [_metric(metric, quantity(scaling.target))],
        "behavior": behavior(scaling),
    }
    return {
        "apiVersion": kinds.AUTOSCALING,
        "kind": "HorizontalPodAutoscaler",
        "metadata": server_pod.metadata(svc),
        "spec": spec,
    }


def server_kind(fit: Fit) -> dict[str, str]:
    """apiVersion and kind of the object that runs the replicas."""
    if fit.multi_host:
        return {"apiVersion": kinds.LWS, "kind": "LeaderWorkerSet"}
    return {"apiVersion": kinds.APPS, "kind": "Deployment"}


def behavior(scaling: Autoscaling) -> Obj:
    """HPA `behavior`: up at once (capacity permitting), down one replica at a time, slowly:
    a removed replica costs minutes of model loading to bring back."""
    return {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "policies": [
                {"type": "Pods", "value": scaling.scale_up_pods_per_minute, "periodSeconds": 60}
            ],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": scaling.scale_down_delay_seconds,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": SCALE_DOWN_PERIOD_SECONDS}],
        },
    }


def metric_name(metric: Metric) -> str:
    """The name the Custom Metrics Stackdriver Adapter serves a GMP gauge under.

    Example:
        >>> metric_name(Metric("vllm:num_requests_waiting"))
        'prometheus.googleapis.com|vllm:num_requests_waiting|gauge'
    """
    return f"prometheus.googleapis.com|{metric.name}|gauge"


def quantity(value: float) -> str:
    """A Kubernetes quantity: whole numbers as such, fractions in milli-units.

    Example:
        >>> quantity(5.0), quantity(0.25)
        ('5', '250m')
    """
    if float(value).is_integer():
        return str(int(value))
    return f"{round(value * 1000)}m"


def scaled_object(svc: ServeFields, fit: Fit, target_name: str = "") -> Obj:
    """A `keda.sh/v1alpha1` ScaledObject from 0 to `max` replicas on the engine's gauge summed
    over the service's pods (GMP labels every series with `namespace` and, as `job`, the
    PodMonitoring's name), active above `activation`: GKE documents scale to zero for model
    servers with KEDA and its prometheus scaler (serverAddress, query, threshold,
    activationThreshold) reading Managed Prometheus.

    With Istio routing a second trigger counts the requests callers send to the Service:
    with no replica running the engine exports no queue at all, so only the caller's sidecar
    sees the first request (`serving.rules.check_wakes` refuses scale to zero without it,
    unless a SpotMix's on-demand floor keeps running).

    Example:
        >>> from gkeml_sdk import Accelerator, Autoscaling, ServeModel
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), replicas=Autoscaling(min=0, max=3),
        ...     routing=Routing(via="istio"))
        >>> so = scaled_object(svc, svc.fit)
        >>> so["spec"]["minReplicaCount"], so["spec"]["triggers"][0]["metadata"]["query"]
        (0, 'sum(vllm:num_requests_waiting{namespace="default",job="qa"})')
    """
    scaling = svc.autoscaling
    if scaling is None or not scaling.to_zero:
        raise ValueError(f"{svc.name}: replicas do not scale to zero")
    metric = svc.engine_row.scaling_metric(scaling.signal)
    matchers = [f'namespace="{svc.namespace}"', f'job="{svc.name}"']
    matchers += [f'{key}="{value}"' for key, value in metric.labels]
    query = f"sum({metric.name}{{{','.join(matchers)}}})"
    triggers = [_prometheus(scaling.prometheus_address, query, scaling.target, scaling.activation)]
    routing = svc.routing
    if routing is not None and routing.via == "istio":
        callers = (
            f'sum(rate(istio_requests_total{{destination_service_name="{svc.name}",'
            f'destination_service_namespace="{svc.namespace}"}}[1m]))'
        )
        # Wakes the server only: at its huge threshold it never asks for a second replica.
        triggers.append(_prometheus(scaling.prometheus_address, callers, MAX_TARGET, 0.0))
    spec: Obj = {
        "scaleTargetRef": {**server_kind(fit), "name": target_name or svc.name},
        "pollingInterval": POLLING_SECONDS,
        "cooldownPeriod": scaling.scale_down_delay_seconds,
        "minReplicaCount": 0,
        "maxReplicaCount": scaling.max,
        "advanced": {"horizontalPodAutoscalerConfig": {"behavior": behavior(scaling)}},
        "triggers": triggers,
    }
    return {
        "apiVersion": kinds.KEDA,
        "kind": "ScaledObject",
        "metadata": server_pod.metadata(svc),
        "spec": spec,
    }


def routing_objects(svc: ServeFields, fit: Fit) -> list[Obj]:
    """The routing objects `svc.routing` asks for (none without routing).

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), routing=Routing(via="istio"))
        >>> [o["kind"] for o in routing_objects(svc, svc.fit)]
        ['DestinationRule', 'VirtualService']
    """
    routing = svc.routing
    if routing is None:
        return []
    if routing.via == "inference-gateway":
        objects = [_inference_pool(svc, fit, routing), *_gke_policies(svc, routing)]
        if not routing.backend_only:
            objects.append(_http_route(svc, routing))
        return objects
    objects = [_destination_rule(svc)]
    if not routing.backend_only:
        objects.append(_virtual_service(svc, routing))
    return objects


def routes(svc: ServeFields, routing: Routing) -> list[Route]:
    """The routes to write: the given ones, or this service's model name to itself.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), routing=Routing(via="istio"))
        >>> routes(svc, svc.routing)[0].backends
        {'qa': 100}
    """
    return list(routing.routes) or [Route(model=svc.model_name, backends={svc.name: 100})]


def service_host(name: str, namespace: str) -> str:
    """In-cluster DNS name of a Service.

    Example:
        >>> service_host("chat", "serving")
        'chat.serving.svc.cluster.local'
    """
    return f"{name}.{namespace}.svc.cluster.local"


def _metric(metric: Metric, average: str) -> Obj:
    target = {"type": "AverageValue", "averageValue": average}
    if not metric.labels:
        # Per-pod gauge averaged over the target's pods: what Google's samples use.
        return {"type": "Pods", "pods": {"metric": {"name": metric_name(metric)}, "target": target}}
    # A labelled series (Triton's request_type) needs a selector, which only External takes;
    # AverageValue divides the service-wide value by the replica count.
    selector = {"matchLabels": {f"metric.labels.{k}": v for k, v in metric.labels}}
    return {
        "type": "External",
        "external": {
            "metric": {"name": metric_name(metric), "selector": selector},
            "target": target,
        },
    }


def _prometheus(address: str, query: str, threshold: float, activation: float) -> Obj:
    metadata = {
        "serverAddress": address,
        "query": query,
        "threshold": f"{threshold:.10g}",
        "activationThreshold": f"{activation:.10g}",
    }
    return {"type": "prometheus", "metricType": "AverageValue", "metadata": metadata}


def _inference_pool(svc: ServeFields, fit: Fit, routing: Routing) -> Obj:
    picker = {
        "name": routing.endpoint_picker or f"{svc.name}-epp",
        "port": {"number": EPP_PORT},
        # The Helm chart's default: serve without the picker's scoring rather than fail.
        "failureMode": routing.failure_mode or "FailOpen",
    }
    spec = {
        "selector": {"matchLabels": server_pod.serving_pods(svc, fit)},
        "targetPorts": [{"number": svc.engine_row.port}],
        "endpointPickerRef": picker,
    }
    return {
        "apiVersion": POOL_API,
        "kind": "InferencePool",
        "metadata": server_pod.metadata(svc),
        "spec": spec,
    }


def _gke_policies(svc: ServeFields, routing: Routing) -> list[Obj]:
    target = {"group": POOL_GROUP, "kind": "InferencePool", "name": svc.name}
    eng = svc.engine_row
    health = {
        "apiVersion": GKE_NETWORKING_API,
        "kind": "HealthCheckPolicy",
        "metadata": server_pod.metadata(svc),
        "spec": {
            "targetRef": dict(target),
            "default": {
                "timeoutSec": 2,
                "checkIntervalSec": 2,
                "config": {
                    "type": "HTTP",
                    "httpHealthCheck": {"requestPath": eng.readiness_path, "port": eng.port},
                },
            },
        },
    }
    # The load balancer's 30 s default would cut long generations.
    backend = {
        "apiVersion": GKE_NETWORKING_API,
        "kind": "GCPBackendPolicy",
        "metadata": server_pod.metadata(svc),
        "spec": {
            "targetRef": dict(target),
            "default": {"timeoutSec": routing.timeout_seconds, "logging": {"enabled": True}},
        },
    }
    return [health, backend]


def _http_route(svc: ServeFields, routing: Routing) -> Obj:
    namespace, _, gateway = (routing.gateway or DEFAULT_GATEWAY).rpartition("/")
    parent: Obj = {"name": gateway}
    if namespace:
        parent["namespace"] = namespace
    rules = []
    for route in routes(svc, routing):
        match: Obj = {"path": {"type": "PathPrefix", "value": "/"}}
        if routing.match_model_header:
            match["headers"] = [
                {"type": "Exact", "name": GATEWAY_MODEL_HEADER, "value": route.model}
            ]
        backends = [
            {"group": POOL_GROUP, "kind": "InferencePool", "name": name, "weight": weight}
            for name, weight in route.backends.items()
        ]
        rules.append({"matches": [match], "backendRefs": backends})
    return {
        "apiVersion": GATEWAY_API,
        "kind": "HTTPRoute",
        "metadata": server_pod.metadata(svc),
        "spec": {"parentRefs": [parent], "rules": rules},
    }


def _destination_rule(svc: ServeFields) -> Obj:
    policy = {
        # LLM requests vary by orders of magnitude in cost: send each to the least busy pod.
        "loadBalancer": {"simple": "LEAST_REQUEST"},
        # Small pools: the 10 % default cap would never eject the one bad replica.
        "outlierDetection": {
            "consecutive5xxErrors": 3,
            "consecutiveGatewayErrors": 2,
            "interval": "10s",
            "baseEjectionTime": "60s",
            "maxEjectionPercent": 100,
        },
    }
    spec = {"host": service_host(svc.name, svc.namespace), "trafficPolicy": policy}
    return {
        "apiVersion": ISTIO_API,
        "kind": "DestinationRule",
        "metadata": server_pod.metadata(svc),
        "spec": spec,
    }


def _virtual_service(svc: ServeFields, routing: Routing) -> Obj:
    gateways = ["mesh"] if routing.gateway is None else [routing.gateway, "mesh"]
    http = [
        _istio_rule(svc, routing, route, match=routing.match_model_header)
        for route in routes(svc, routing)
    ]
    if routing.match_model_header:
        # Requests without the header go to the first model, as a plain Service call would.
        http.append(_istio_rule(svc, routing, routes(svc, routing)[0], match=False))
    spec = {
        "hosts": list(routing.hosts) or [service_host(svc.name, svc.namespace)],
        "gateways": gateways,
        "http": http,
    }
    return {
        "apiVersion": ISTIO_API,
        "kind": "VirtualService",
        "metadata": server_pod.metadata(svc),
        "spec": spec,
    }


def _istio_rule(svc: ServeFields, routing: Routing, route: Route, *, match: bool) -> Obj:
    timeout = f"{routing.timeout_seconds}s"
    rule: Obj = {"name": slug(route.model, empty="model") if match else "default"}
    if match:
        rule["match"] = [{"headers": {ISTIO_MODEL_HEADER: {"exact": route.model}}}]
    rule["route"] = [
        {
            "destination": {
                "host": service_host(name, svc.namespace),
                "port": {"number": SERVICE_PORT},
            },
            "weight": weight,
        }
        for name, weight in _percentages(route.backends).items()
    ]
    rule["timeout"] = timeout
    if routing.attempts:
        rule["retries"] = {
            "attempts": routing.attempts,
            "perTryTimeout": timeout,
            "retryOn": RETRY_ON,
        }
    else:
        rule["retries"] = {"attempts": 0}
    return rule


def _percentages(weights: dict[str, int]) -> dict[str, int]:
    # Older Istio releases require route weights that add up to 100; scale, keep the sum exact.
    total = sum(weights.values())
    shares = {name: weight * 100 // total for name, weight in weights.items()}
    leftover = 100 - sum(shares.values())
    for name in sorted(weights, key=lambda n: (-(weights[n] * 100 % total), n))[:leftover]:
        shares[name] += 1
    return shares
