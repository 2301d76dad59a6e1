"""Model-aware routing objects: InferencePool + HTTPRoute (+ GKE backend and health-check
policies) for the GKE Inference Gateway, or DestinationRule + VirtualService for Istio."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.rules import slug
from gkeml_sdk.serving import serve_labels as lab
from gkeml_sdk.serving.engine_row import SERVICE_PORT
from gkeml_sdk.serving.routing import Route, Routing
from gkeml_sdk.serving.sizing import Fit

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel

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


def routing_objects(svc: ServeModel, fit: Fit) -> list[Obj]:
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


def routes(svc: ServeModel, routing: Routing) -> list[Route]:
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


def _inference_pool(svc: ServeModel, fit: Fit, routing: Routing) -> Obj:
    picker = {
        "name": routing.endpoint_picker or f"{svc.name}-epp",
        "port": {"number": EPP_PORT},
        # The Helm chart's default: serve without the picker's scoring rather than fail.
        "failureMode": routing.failure_mode or "FailOpen",
    }
    spec = {
        "selector": {"matchLabels": lab.serving_pods(svc, fit)},
        "targetPorts": [{"number": svc.engine_row.port}],
        "endpointPickerRef": picker,
    }
    return {
        "apiVersion": POOL_API,
        "kind": "InferencePool",
        "metadata": lab.metadata(svc),
        "spec": spec,
    }


def _gke_policies(svc: ServeModel, routing: Routing) -> list[Obj]:
    target = {"group": POOL_GROUP, "kind": "InferencePool", "name": svc.name}
    eng = svc.engine_row
    health = {
        "apiVersion": GKE_NETWORKING_API,
        "kind": "HealthCheckPolicy",
        "metadata": lab.metadata(svc),
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
        "metadata": lab.metadata(svc),
        "spec": {
            "targetRef": dict(target),
            "default": {"timeoutSec": routing.timeout_seconds, "logging": {"enabled": True}},
        },
    }
    return [health, backend]


def _http_route(svc: ServeModel, routing: Routing) -> Obj:
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
        "metadata": lab.metadata(svc),
        "spec": {"parentRefs": [parent], "rules": rules},
    }


def _destination_rule(svc: ServeModel) -> Obj:
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
        "metadata": lab.metadata(svc),
        "spec": spec,
    }


def _virtual_service(svc: ServeModel, routing: Routing) -> Obj:
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
        "metadata": lab.metadata(svc),
        "spec": spec,
    }


def _istio_rule(svc: ServeModel, routing: Routing, route: Route, *, match: bool) -> Obj:
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
