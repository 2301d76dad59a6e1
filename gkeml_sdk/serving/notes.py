"""What a compiled service depends on or risks that the manifests alone do not show."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.hardware.manifests import network_notes
from gkeml_sdk.scheduling.spot import SPOT_DEFAULT_GRACE_SECONDS, SPOT_NOTICE_SECONDS
from gkeml_sdk.serving.autoscaling_objects import metric_name
from gkeml_sdk.serving.plan import ServePlan
from gkeml_sdk.serving.routing_objects import (
    DEFAULT_GATEWAY,
    GATEWAY_MODEL_HEADER,
    ISTIO_MODEL_HEADER,
)
from gkeml_sdk.serving.scale_up import scale_up_sentence
from gkeml_sdk.serving.spot_mix import SPOT_SUFFIX

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel


def serving_notes(svc: ServeModel, plan: ServePlan) -> tuple[str, ...]:
    """Risks and cluster prerequisites of `svc`, one sentence each.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"), spot=True, replicas=2)
        >>> [n.split(":")[0] for n in serving_notes(svc, svc.plan())]
        ['Spot']
    """
    eng = svc.engine_row
    notes = list(eng.notes)
    sized = scale_up_sentence(svc)
    if sized:
        notes.append(sized)
    mix = svc.spot_mix
    if mix is not None:
        notes.append(
            f"Spot mix: {mix.on_demand_min} on-demand replica(s) in Deployment {svc.name!r} "
            f"always serve; the Spot replicas in {svc.name + SPOT_SUFFIX!r} come and go with "
            "reclaims, both behind one Service, each with its own PodDisruptionBudget"
        )
    if svc.spot:
        notes.append(
            f"Spot: GKE may reclaim a serving node with about {SPOT_NOTICE_SECONDS} s notice "
            f"(pods get {SPOT_DEFAULT_GRACE_SECONDS} s to drain, not the grace period), and the "
            f"replica is gone until a new node starts and reloads the model (up to "
            f"{plan.startup_seconds} s); keep at least 2 replicas or add on-demand capacity "
            "for user-facing traffic"
        )
    if plan.max_replicas == 0:
        notes.append("replicas=0: the service is defined but stopped")
    elif plan.min_replicas < 2:
        notes.append(
            "one replica: a node upgrade, drain or reclaim is an outage; prefer at least 2 "
            "replicas for user-facing traffic"
        )
    if plan.fit.multi_host:
        notes.append(
            "multi-host: the LeaderWorkerSet controller (leaderworkerset.x-k8s.io/v1) must be "
            "installed; a failed pod restarts its whole group"
        )
    if svc.accelerator.gpu.arch != "amd64":
        notes.append(
            f"{svc.accelerator.gpu.display} nodes are {svc.accelerator.gpu.arch}: the image "
            "needs a build for that architecture"
        )
    if svc.queue:
        notes.append(
            f"Kueue queue {svc.queue!r}: Kueue admits these pods only with its Deployment / "
            "LeaderWorkerSet integration enabled"
        )
    scaling = svc.autoscaling
    if scaling is not None and scaling.to_zero:
        notes.extend(_to_zero_notes(svc, plan))
    elif scaling is not None:
        metric = eng.queue_metric if scaling.signal == "queue_depth" else eng.batch_metric
        notes.append(
            f"autoscaling reads {metric_name(metric)} through the Custom Metrics Stackdriver "
            "Adapter (namespace custom-metrics, roles/monitoring.viewer via Workload "
            "Identity); without it the HPA cannot read the metric"
        )
        if metric.labels:
            notes.append(
                "the External metric's label selector (metric.labels.*) is not verified "
                "against the adapter; check `kubectl describe hpa` after deploying"
            )
    notes.extend(_routing_notes(svc))
    notes.extend(network_notes(svc.network_choice))
    return tuple(notes)


def _to_zero_notes(svc: ServeModel, plan: ServePlan) -> list[str]:
    notes = [
        f"scale to zero: the first request after {svc.autoscaling.scale_down_delay_seconds} s "  # type: ignore[union-attr]
        f"idle waits for a replica to start, about {plan.expected_startup_seconds} s of model "
        f"load (probe budget {plan.startup_seconds} s), plus a node if the pool scaled down; "
        "clients must retry or queue meanwhile",
        "KEDA (keda.sh/v1alpha1) must be installed, and the Managed Prometheus frontend "
        f"must answer at {svc.autoscaling.prometheus_address} for its queries",  # type: ignore[union-attr]
    ]
    if svc.routing is None or svc.routing.via != "istio":
        notes.append(
            "with no replica running the engine exports no queue, so no request can wake the "
            "server by itself: route it through Istio (routing=Routing(via='istio')), whose "
            "request count wakes it, or wake it with handle.scale(1)"
        )
    return notes


def _routing_notes(svc: ServeModel) -> list[str]:
    routing = svc.routing
    if routing is None:
        return []
    if routing.via == "istio":
        notes = ["Istio: the namespace needs sidecar injection (or ambient mode)"]
        if routing.match_model_header and not routing.backend_only:
            notes.append(
                f"Istio cannot read the JSON body: clients (or a body-to-header step) set "
                f"the {ISTIO_MODEL_HEADER} header; requests without it go to the first route"
            )
        return notes
    picker = routing.endpoint_picker or f"{svc.name}-epp"
    notes = [
        f"Inference Gateway: the endpoint picker Service {picker!r} (port 9002) must exist, "
        "e.g. from the GAIE 'inferencepool' Helm chart with provider.name=gke"
    ]
    if not routing.backend_only:
        notes.append(
            f"the HTTPRoute attaches to Gateway {routing.gateway or DEFAULT_GATEWAY!r} "
            "(class gke-l7-rilb or gke-l7-regional-external-managed; a proxy-only subnet is "
            "required)"
        )
        if routing.match_model_header:
            notes.append(
                f"matching {GATEWAY_MODEL_HEADER} needs the Body-Based Router, which copies "
                "the request's model name into that header"
            )
    return notes
