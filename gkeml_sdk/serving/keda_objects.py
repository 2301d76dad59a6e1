"""Scale to zero: a KEDA `ScaledObject` on the engine's queue, read from Managed Prometheus
with PromQL, in place of the HPA when `Autoscaling(min=0)` (GKE documents scale to zero for
model servers with KEDA; KEDA's prometheus scaler: serverAddress, query, threshold,
activationThreshold)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.serving import serve_labels as lab
from gkeml_sdk.serving.autoscaling import MAX_TARGET
from gkeml_sdk.serving.autoscaling_objects import behavior, scaled_metric, server_kind
from gkeml_sdk.serving.sizing import Fit

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel

POLLING_SECONDS = 15  # the GMP scrape interval: polling faster reads the same sample


def scaled_object(svc: ServeModel, fit: Fit, target_name: str = "") -> Obj:
    """A `keda.sh/v1alpha1` ScaledObject from 0 to `max` replicas on the engine's gauge summed
    over the service's pods (GMP labels every series with `namespace` and, as `job`, the
    PodMonitoring's name), active above `activation`.

    With Istio routing a second trigger counts the requests callers send to the Service:
    with no replica running the engine exports no queue at all, so only the caller's sidecar
    sees the first request. Without it the service wakes only when scaled by hand.

    Example:
        >>> from gkeml_sdk import Accelerator, Autoscaling, ServeModel
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), replicas=Autoscaling(min=0, max=3))
        >>> so = scaled_object(svc, svc.fit)
        >>> so["spec"]["minReplicaCount"], so["spec"]["triggers"][0]["metadata"]["query"]
        (0, 'sum(vllm:num_requests_waiting{namespace="default",job="qa"})')
    """
    scaling = svc.autoscaling
    if scaling is None or not scaling.to_zero:
        raise ValueError(f"{svc.name}: replicas do not scale to zero")
    metric = scaled_metric(svc, scaling)
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
        "metadata": lab.metadata(svc),
        "spec": spec,
    }


def _prometheus(address: str, query: str, threshold: float, activation: float) -> Obj:
    metadata = {
        "serverAddress": address,
        "query": query,
        "threshold": f"{threshold:.10g}",
        "activationThreshold": f"{activation:.10g}",
    }
    return {"type": "prometheus", "metricType": "AverageValue", "metadata": metadata}
