"""ServeModel -> Deployment (one node per replica) or LeaderWorkerSet (replicas spanning
nodes), with its Service, PodDisruptionBudget, monitoring, autoscaling and routing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.manifests import add_network
from gkeml_sdk.scheduling.manifests import accelerator_scheduling
from gkeml_sdk.serving import serve_labels as lab
from gkeml_sdk.serving.autoscaling_objects import horizontal_pod_autoscaler, pod_monitoring
from gkeml_sdk.serving.container import (
    CONTAINER,
    Role,
    container,
    grace_seconds,
    pod_annotations,
    volumes,
)
from gkeml_sdk.serving.engine_row import HTTP_PORT_NAME, SERVICE_PORT
from gkeml_sdk.serving.keda_objects import scaled_object
from gkeml_sdk.serving.notes import serving_notes
from gkeml_sdk.serving.plan import ServePlan
from gkeml_sdk.serving.routing_objects import routing_objects
from gkeml_sdk.serving.spot_mix import CAPACITY_LABEL, SPOT_SUFFIX
from gkeml_sdk.storage.volume_objects import volume_notes, volume_objects

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel

LWS_API = kinds.LWS
ZONE = "topology.kubernetes.io/zone"
# A Deployment whose pods load weights longer than this is not stalled: keep the
# ProgressDeadlineExceeded condition for real failures.
PROGRESS_MARGIN_SECONDS = 300


def compile_serve(svc: ServeModel) -> Manifests:
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
    plan = svc.plan()
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


def _service(svc: ServeModel, plan: ServePlan) -> Obj:
    eng = svc.engine_row
    ports = [{"name": HTTP_PORT_NAME, "port": SERVICE_PORT, "targetPort": HTTP_PORT_NAME}]
    ports += [
        {"name": name, "port": port, "targetPort": name}
        for name, port in eng.extra_ports
        if name != eng.metrics_port
    ]
    spec: Obj = {
        "type": "ClusterIP",
        "selector": lab.serving_pods(svc, plan.fit),
        "ports": [{**p, "protocol": "TCP"} for p in ports],
    }
    return {
        "apiVersion": kinds.CORE,
        "kind": "Service",
        "metadata": lab.metadata(svc),
        "spec": spec,
    }


def server_name(svc: ServeModel, capacity: str = "") -> str:
    """The Deployment or LeaderWorkerSet of one part: the service's name, or its Spot part's.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> server_name(ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...                        accelerator=Accelerator("l4")), "spot")
        'chat-spot'
    """
    return svc.name + (SPOT_SUFFIX if capacity == "spot" else "")


def _parts(svc: ServeModel) -> list[tuple[ServeModel, str]]:
    # A SpotMix is two servers behind the one Service: the autoscaled Spot part first, the
    # on-demand floor (the main object, named as the service) last.
    mix = svc.spot_mix
    if mix is None:
        return [(svc, "")]
    spot = svc.with_changes(spot=True)
    floor = svc.with_changes(spot=False, replicas=mix.on_demand_min)
    return [(spot, "spot"), (floor, "on-demand")]


def _selector(svc: ServeModel, capacity: str) -> dict[str, str]:
    return {**lab.all_pods(svc), CAPACITY_LABEL: capacity} if capacity else lab.all_pods(svc)


def _named(svc: ServeModel, capacity: str) -> dict[str, object]:
    meta = lab.metadata(svc, main=True)
    if capacity:
        name = server_name(svc, capacity)
        labels = {**meta["labels"], CAPACITY_LABEL: capacity}  # type: ignore[dict-item]
        return {**meta, "name": name, "labels": labels}
    return meta


def _disruption_budget(svc: ServeModel, capacity: str = "") -> Obj:
    spec: Obj = {
        "maxUnavailable": 1,
        "selector": {"matchLabels": _selector(svc, capacity)},
        # A pod stuck loading must never block a node drain.
        "unhealthyPodEvictionPolicy": "AlwaysAllow",
    }
    return {
        "apiVersion": kinds.POLICY,
        "kind": "PodDisruptionBudget",
        "metadata": _named(svc, capacity) if capacity else lab.metadata(svc),
        "spec": spec,
    }


def _deployment(svc: ServeModel, plan: ServePlan, capacity: str = "") -> Obj:
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


def _leader_worker_set(svc: ServeModel, plan: ServePlan, capacity: str = "") -> Obj:
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
    svc: ServeModel,
    plan: ServePlan,
    role: Role,
    capacity: str = "",
    spread_by_rollout: bool = False,
) -> Obj:
    fit = plan.fit
    labels = {**svc.labels, **_selector(svc, capacity)}
    if role != "server":
        labels[lab.ROLE_LABEL] = role
    engine_type = svc.engine_row.gateway_engine_type
    if svc.routing and svc.routing.via == "inference-gateway" and engine_type:
        labels[lab.ENGINE_TYPE_LABEL] = engine_type
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


def _zone_spread(svc: ServeModel, plan: ServePlan, by_rollout: bool) -> Obj:
    # GPUs are often in one or two zones: prefer spreading, never leave a replica Pending.
    spread: Obj = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": lab.serving_pods(svc, plan.fit)},
    }
    if by_rollout:
        spread["matchLabelKeys"] = ["pod-template-hash"]
    return spread


def _same_zone_as_group(svc: ServeModel) -> Obj:
    # Pipeline stages exchange activations every step: a group stays in its leader's zone.
    # The API server adds this pod's group-key value to the selector (a key may not appear in
    # both matchLabelKeys and labelSelector).
    term = {
        "labelSelector": {"matchLabels": lab.all_pods(svc)},
        "matchLabelKeys": [lab.LWS_GROUP_KEY],
        "topologyKey": ZONE,
    }
    return {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
