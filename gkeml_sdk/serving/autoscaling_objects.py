"""Engine metrics into Cloud Monitoring (PodMonitoring) and a HorizontalPodAutoscaler on the
engine's queue depth or batch size, through the GKE custom metrics path
(https://cloud.google.com/kubernetes-engine/docs/best-practices/machine-learning/inference/autoscaling)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.serving import serve_labels as lab
from gkeml_sdk.serving.engine_row import Metric
from gkeml_sdk.serving.sizing import Fit

if TYPE_CHECKING:
    from gkeml_sdk.serving.autoscaling import Autoscaling
    from gkeml_sdk.serving.model import ServeModel

SCRAPE_INTERVAL = "15s"
SCALE_DOWN_PERIOD_SECONDS = 300  # remove at most one replica per 5 minutes


def pod_monitoring(svc: ServeModel, fit: Fit) -> Obj:
    """A `monitoring.googleapis.com/v1` PodMonitoring scraping the engine's metrics endpoint.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="t", engine="triton", model="mistral-7b",
        ...     accelerator=Accelerator("l4"), tensor_parallel=1, pipeline_parallel=1,
        ...     model_repository="gs://b/m", hf_token_secret="hf")
        >>> pod_monitoring(svc, svc.fit)["spec"]["endpoints"][0]["port"]
        'metrics'
    """
    eng = svc.engine_row
    endpoint = {"port": eng.metrics_port, "path": eng.metrics_path, "interval": SCRAPE_INTERVAL}
    return {
        "apiVersion": kinds.MANAGED_PROMETHEUS,
        "kind": "PodMonitoring",
        "metadata": lab.metadata(svc),
        "spec": {
            "selector": {"matchLabels": lab.serving_pods(svc, fit)},
            "endpoints": [endpoint],
        },
    }


def horizontal_pod_autoscaler(svc: ServeModel, fit: Fit, target_name: str = "") -> Obj:
    """An `autoscaling/v2` HPA on the engine gauge `svc.replicas` names, averaged per replica.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.serving.autoscaling import Autoscaling
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), replicas=Autoscaling(max=3, queue_depth=2.5))
        >>> hpa = horizontal_pod_autoscaler(svc, svc.fit)
        >>> hpa["spec"]["metrics"][0]["pods"]["target"]["averageValue"]
        '2500m'
    """
    scaling = svc.autoscaling
    if scaling is None:
        raise ValueError(f"{svc.name}: replicas are fixed; there is nothing to autoscale")
    metric = scaled_metric(svc, scaling)
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
        "metadata": lab.metadata(svc),
        "spec": spec,
    }


def scaled_metric(svc: ServeModel, scaling: Autoscaling) -> Metric:
    """The engine gauge `scaling` follows: its queue or its batch."""
    eng = svc.engine_row
    return eng.queue_metric if scaling.signal == "queue_depth" else eng.batch_metric


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
