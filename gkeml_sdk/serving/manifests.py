"""ServeModel -> Deployment or LeaderWorkerSet with its Service, PodDisruptionBudget,
monitoring, autoscaling and routing, and the notes on what they depend on or risk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.manifests import add_network, network_notes
from gkeml_sdk.scheduling.manifests import accelerator_scheduling
from gkeml_sdk.scheduling.spot import SPOT_DEFAULT_GRACE_SECONDS, SPOT_NOTICE_SECONDS
from gkeml_sdk.serving import server_pod
from gkeml_sdk.serving.catalog import HTTP_PORT_NAME, SERVICE_PORT
from gkeml_sdk.serving.hardware_rules import scale_up_sentence
from gkeml_sdk.serving.plan import ServePlan, build_plan
from gkeml_sdk.serving.rollout import CAPACITY_LABEL, SPOT_SUFFIX
from gkeml_sdk.serving.server_pod import (
    CONTAINER,
    Role,
    container,
    grace_seconds,
    pod_annotations,
    volumes,
)
from gkeml_sdk.serving.traffic import (
    DEFAULT_GATEWAY,
    GATEWAY_MODEL_HEADER,
    ISTIO_MODEL_HEADER,
    horizontal_pod_autoscaler,
    metric_name,
    pod_monitoring,
    routing_objects,
    scaled_object,
)
from gkeml_sdk.storage.volume_objects import volume_notes, volume_objects

if TYPE_CHECKING:
    from gkeml_sdk.serving.fields import ServeFields

LWS_API = kinds.LWS
ZONE = "topology.kubernetes.io/zone"
# A Deployment whose pods load weights longer than this is not stalled: keep the
# ProgressDeadlineExceeded condition for real failures.
PROGRESS_MARGIN_SECONDS = 300


def compile_serve(svc: ServeFields) -> Manifests:
    """Manifests for `svc`. The Deployment or LeaderWorkerSet comes last (`Manifests.main`).
    Deterministic: equal specs give byte-identical YAML.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> m = compile_serve(ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                              accelerator=Accelerator("l4")))
        >>> [o["kind"] for o in m.objects]
        ['Service', 'PodMonitoring', 'PodDisruptionBudget', 'Deployment']
    """
    plan = build_plan(svc)
    parts = _parts(svc)
    objects = [_service(svc, plan), pod_monitoring(svc, plan.fit)]
    objects += [_disruption_budget(part, capacity) for part, capacity in parts]
    for part, capacity in parts:
        scaling = part.autoscaling
        if scaling is not None:
            scaler = scaled_object if scaling.to_zero else horizontal_pod_autoscaler
            objects.append(scaler(part, plan.fit, server_name(part, capacity)))
    objects.extend(routing_objects(svc, plan.fit))
    server = _leader_worker_set if plan.fit.multi_host else _deployment
    objects += [server(part, plan, capacity) for part, capacity in parts]
    weights = [svc.weights] if svc.weights is not None else []
    notes = (*serving_notes(svc, plan), *volume_notes(weights, svc.namespace, svc.service_account))
    # The weights' claim (and what fills it) exists before the pods that mount it.
    objects[:0] = volume_objects(weights, svc.namespace, svc.service_account)
    return Manifests(objects=objects, notes=notes)


def serving_notes(svc: ServeFields, plan: ServePlan) -> tuple[str, ...]:
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
        metric = eng.scaling_metric(scaling.signal)
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


def _service(svc: ServeFields, plan: ServePlan) -> Obj:
    eng = svc.engine_row
    ports = [{"name": HTTP_PORT_NAME, "port": SERVICE_PORT, "targetPort": HTTP_PORT_NAME}]
    ports += [
        {"name": name, "port": port, "targetPort": name}
        for name, port in eng.extra_ports
        if name != eng.metrics_port
    ]
    spec: Obj = {
        "type": "ClusterIP",
        "selector": server_pod.serving_pods(svc, plan.fit),
        "ports": [{**p, "protocol": "TCP"} for p in ports],
    }
    return {
        "apiVersion": kinds.CORE,
        "kind": "Service",
        "metadata": server_pod.metadata(svc),
        "spec": spec,
    }


def server_name(svc: ServeFields, capacity: str = "") -> str:
    """The Deployment or LeaderWorkerSet of one part: the service's name, or its Spot part's.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> server_name(ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...                        accelerator=Accelerator("l4")), "spot")
        'chat-spot'
    """
    return svc.name + (SPOT_SUFFIX if capacity == "spot" else "")


def _parts(svc: ServeFields) -> list[tuple[ServeFields, str]]:
    # A SpotMix is two servers behind the one Service: the autoscaled Spot part first, the
    # on-demand floor (the main object, named as the service) last.
    mix = svc.spot_mix
    if mix is None:
        return [(svc, "")]
    # The Spot part alone may scale to zero: the floor's queue wakes it, which the parent's
    # validation knew (serving.rules.check_wakes), so it is not validated again on its own.
    spot = svc.model_copy(update={"spot": True})
    floor = svc.with_changes(spot=False, replicas=mix.on_demand_min)
    return [(spot, "spot"), (floor, "on-demand")]


def _selector(svc: ServeFields, capacity: str) -> dict[str, str]:
    return (
        {**server_pod.all_pods(svc), CAPACITY_LABEL: capacity}
        if capacity
        else server_pod.all_pods(svc)
    )


def _named(svc: ServeFields, capacity: str) -> dict[str, object]:
    meta = server_pod.metadata(svc, main=True)
    if capacity:
        name = server_name(svc, capacity)
        labels = {**meta["labels"], CAPACITY_LABEL: capacity}  # type: ignore[dict-item]
        return {**meta, "name": name, "labels": labels}
    return meta


def _disruption_budget(svc: ServeFields, capacity: str = "") -> Obj:
    spec: Obj = {
        "maxUnavailable": 1,
        "selector": {"matchLabels": _selector(svc, capacity)},
        # A pod stuck loading must never block a node drain.
        "unhealthyPodEvictionPolicy": "AlwaysAllow",
    }
    return {
        "apiVersion": kinds.POLICY,
        "kind": "PodDisruptionBudget",
        "metadata": _named(svc, capacity) if capacity else server_pod.metadata(svc),
        "spec": spec,
    }


def _deployment(svc: ServeFields, plan: ServePlan, capacity: str = "") -> Obj:
    selector = _selector(svc, capacity)
    spec: Obj = {}
    if svc.autoscaling is None:
        # With an HPA the replica count is the HPA's: applying one here would reset it.
        spec["replicas"] = svc.min_replicas
    spec["selector"] = {"matchLabels": selector}
    # A new pod loads the model before an old one leaves.
    spec["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    spec["progressDeadlineSeconds"] = plan.startup_seconds + PROGRESS_MARGIN_SECONDS
    spec["template"] = _template(svc, plan, "server", capacity, spread_by_rollout=True)
    return {
        "apiVersion": kinds.APPS,
        "kind": "Deployment",
        "metadata": _named(svc, capacity),
        "spec": spec,
    }


def _leader_worker_set(svc: ServeFields, plan: ServePlan, capacity: str = "") -> Obj:
    group: Obj = {
        "size": plan.fit.pods,
        # One failed pod breaks the model's pipeline: restart the whole group.
        "restartPolicy": "RecreateGroupOnPodRestart",
        "leaderTemplate": _template(svc, plan, "leader", capacity),
        "workerTemplate": _template(svc, plan, "worker", capacity),
    }
    spec: Obj = {}
    if svc.autoscaling is None:
        spec["replicas"] = svc.min_replicas
    # Workers join the leader's Ray cluster, so all pods start together.
    spec["startupPolicy"] = "LeaderCreated"
    spec["leaderWorkerTemplate"] = group
    return {
        "apiVersion": LWS_API,
        "kind": "LeaderWorkerSet",
        "metadata": _named(svc, capacity),
        "spec": spec,
    }


def _template(
    svc: ServeFields,
    plan: ServePlan,
    role: Role,
    capacity: str = "",
    spread_by_rollout: bool = False,
) -> Obj:
    fit = plan.fit
    labels = {**svc.labels, **_selector(svc, capacity)}
    if role != "server":
        labels[server_pod.ROLE_LABEL] = role
    engine_type = svc.engine_row.gateway_engine_type
    if svc.routing and svc.routing.via == "inference-gateway" and engine_type:
        labels[server_pod.ENGINE_TYPE_LABEL] = engine_type
    on_spot = bool(svc.spot)
    selector, tolerations, affinity = accelerator_scheduling(svc.accelerator, on_spot=on_spot)
    # A Service env like VLLM_PORT breaks vLLM (vLLM's "Environment Variables" page).
    spec: Obj = {"enableServiceLinks": False}
    if svc.service_account:
        spec["serviceAccountName"] = svc.service_account
    if svc.priority_class:
        spec["priorityClassName"] = svc.priority_class
    spec["terminationGracePeriodSeconds"] = grace_seconds(svc)
    spec["nodeSelector"] = selector
    if role == "worker":
        affinity = {**affinity, "podAffinity": _same_zone_as_group(svc)}
    if affinity:
        spec["affinity"] = affinity
    spec["tolerations"] = tolerations
    if role != "worker":
        spec["topologySpreadConstraints"] = [_zone_spread(svc, plan, spread_by_rollout)]
    spec["containers"] = [container(svc, fit, role, plan.startup_seconds)]
    spec["volumes"] = volumes(svc, fit)
    metadata: Obj = {"labels": labels}
    annotations = pod_annotations(svc)
    if annotations:
        metadata["annotations"] = annotations
    return add_network({"metadata": metadata, "spec": spec}, svc.network_choice.stack, CONTAINER)


def _zone_spread(svc: ServeFields, plan: ServePlan, by_rollout: bool) -> Obj:
    # GPUs are often in one or two zones: prefer spreading, never leave a replica Pending.
    spread: Obj = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": server_pod.serving_pods(svc, plan.fit)},
    }
    if by_rollout:
        spread["matchLabelKeys"] = ["pod-template-hash"]
    return spread


def _same_zone_as_group(svc: ServeFields) -> Obj:
    # Pipeline stages exchange activations every step: a group stays in its leader's zone.
    # The API server adds this pod's group-key value to the selector (a key may not appear in
    # both matchLabelKeys and labelSelector).
    term = {
        "labelSelector": {"matchLabels": server_pod.all_pods(svc)},
        "matchLabelKeys": [server_pod.LWS_GROUP_KEY],
        "topologyKey": ZONE,
    }
    return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}


def _to_zero_notes(svc: ServeFields, plan: ServePlan) -> list[str]:
    notes = [
        f"scale to zero: the first request after {svc.autoscaling.scale_down_delay_seconds} s "  # type: ignore[union-attr]
        f"idle waits for a replica to start, about {plan.expected_startup_seconds} s of model "
        f"load (probe budget {plan.startup_seconds} s), plus a node if the pool scaled down; "
        "clients must retry or queue meanwhile",
        "KEDA (keda.sh/v1alpha1) must be installed, and the Managed Prometheus frontend "
        f"must answer at {svc.autoscaling.prometheus_address} for its queries",  # type: ignore[union-attr]
    ]
    return notes


def _routing_notes(svc: ServeFields) -> list[str]:
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
