"""A tenant's model: its primary server (ServeModel's own objects, on the tier's priority
and queue) and the standbys of its tier: hot (running, taking a small share), warm (started,
asleep with vLLM's sleep mode) or cold (a Deployment at 0 replicas whose GPUs placeholder
pods hold)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.scheduling.kueue import PRIORITY_LABEL
from gkeml_sdk.serving.catalog import SERVE_LABEL
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.rollout import Autoscaling
from gkeml_sdk.serving.routing import Routing
from gkeml_sdk.tenancy import names
from gkeml_sdk.tenancy.nodes import pin

if TYPE_CHECKING:
    from gkeml_sdk.tenancy.fields import TenantFields, TenantModel

ZONE = "topology.kubernetes.io/zone"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
HOT_MIN_AVAILABLE = 2
ENV_TENANT, ENV_LEVEL, ENV_GPU_MEMORY = "TENANT_ID", "STANDBY_LEVEL", "STANDBY_GPU_MEMORY_GB"


def primary_model(tenant: TenantFields, model: TenantModel) -> ServeModel:
    """The tenant's ServeModel as it runs: in the tenant's namespace, queue and priority,
    between its replica bounds, behind an Istio DestinationRule.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> t = load_specs("examples/tenants.yaml")[0]
        >>> svc = primary_model(t, t.models[0])
        >>> svc.namespace, svc.priority_class, svc.min_replicas, svc.max_replicas
        ('tenant-a', 'gkeml-tier-a-100000', 3, 10)
    """
    bounds = model.min_replicas, model.max_replicas
    replicas: int | Autoscaling = (
        model.min_replicas if bounds[0] == bounds[1] else Autoscaling(min=bounds[0], max=bounds[1])
    )
    labels = {
        **model.model.labels,
        names.TENANT_LABEL: tenant.name,
        names.TIER_LABEL: tenant.tier.key,
        names.MODEL_LABEL: model.name,
        names.ROLE_LABEL: "primary",
        PRIORITY_LABEL: names.tier_class(tenant.tier),
    }
    return model.model.with_changes(
        namespace=tenant.namespace,
        replicas=replicas,
        queue=tenant.name,
        priority_class=names.tier_class(tenant.tier),
        service_account=names.SERVICE_ACCOUNT,
        labels=labels,
        routing=Routing(via=tenant.routing, backend_only=True),
    )


def model_objects(tenant: TenantFields, model: TenantModel) -> list[Obj]:
    """Primary objects, then the standby Service and Deployment (and placeholders)."""
    return compiled_model(tenant, model).objects


def compiled_model(tenant: TenantFields, model: TenantModel) -> Manifests:
    """`model_objects`, with the primary server's notes, each naming the tenant and model."""
    svc = primary_model(tenant, model)
    primary = svc.compile()
    level = tenant.tier.standby_level
    objects = [o for o in primary.objects if not (level == "hot" and _is_pdb(o))]
    if level == "hot":
        objects.insert(0, _hot_budget(tenant, model))
    objects.append(_standby_service(primary, model))
    objects.append(_standby_deployment(tenant, svc, primary.main))
    if level == "cold":
        objects.append(_reserve(tenant, model, primary.main))
    notes = tuple(f"{tenant.name}/{model.name}: {note}" for note in primary.notes)
    return Manifests([pin(tenant, o) if o["kind"] == "Deployment" else o for o in objects], notes)


def _is_pdb(obj: Obj) -> bool:
    return bool(obj["kind"] == "PodDisruptionBudget")


def _hot_budget(tenant: TenantFields, model: TenantModel) -> Obj:
    # One budget over primary and hot standby pods: a pod under two budgets cannot be evicted.
    return {
        "apiVersion": kinds.POLICY,
        "kind": "PodDisruptionBudget",
        "metadata": names.metadata(tenant, f"{model.name}-hot"),
        "spec": {
            "minAvailable": HOT_MIN_AVAILABLE,
            "selector": {"matchLabels": {names.MODEL_LABEL: model.name}},
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        },
    }


def _standby_service(primary: Manifests, model: TenantModel) -> Obj:
    service = copy.deepcopy(primary.of_kind("Service")[0])
    name = names.standby_name(model.name)
    service["metadata"]["name"] = name
    service["metadata"]["labels"][SERVE_LABEL] = name
    service["spec"]["selector"] = {SERVE_LABEL: name}
    return service


def _standby_deployment(tenant: TenantFields, svc: ServeModel, main: Obj) -> Obj:
    level = tenant.tier.standby_level
    name = names.standby_name(svc.name)
    deployment = copy.deepcopy(main)
    meta = deployment["metadata"]
    meta["name"] = name
    meta["labels"].update(
        {SERVE_LABEL: name, names.ROLE_LABEL: "standby", names.LEVEL_LABEL: level}
    )
    spec = deployment["spec"]
    # Cold: nothing runs until a failover scales it up; the others run their standbys.
    spec = {"replicas": 0 if level == "cold" else tenant.tier.standbys, **spec}
    deployment["spec"] = spec
    spec["selector"] = {"matchLabels": {SERVE_LABEL: name}}
    template = spec["template"]
    template["metadata"]["labels"].update(
        {SERVE_LABEL: name, names.ROLE_LABEL: "standby", names.LEVEL_LABEL: level}
    )
    pod = template["spec"]
    pod.pop("topologySpreadConstraints", None)
    # One standby per zone: a zone outage never takes a model and all its standbys.
    anti = {"labelSelector": {"matchLabels": {SERVE_LABEL: name}}, "topologyKey": ZONE}
    pod.setdefault("affinity", {})["podAntiAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": [anti]
    }
    container = pod["containers"][0]
    fit = svc.fit
    assert fit is not None
    reserved_gb = round(fit.gpu_memory_gb * fit.gpus_per_pod, 1)
    env = [
        {"name": ENV_TENANT, "value": tenant.name},
        {"name": ENV_LEVEL, "value": level},
        {"name": ENV_GPU_MEMORY, "value": str(reserved_gb)},
    ]
    sleep = svc.engine_row.sleep_mode
    if level == "warm" and sleep is not None:
        container["args"] = [*container.get("args", []), sleep.flag]
        env += [{"name": k, "value": v} for k, v in sleep.env]
    container["env"] = [*container.get("env", []), *env]
    return deployment


def _reserve(tenant: TenantFields, model: TenantModel, main: Obj) -> Obj:
    name = names.reserve_name(model.name)
    source = main["spec"]["template"]["spec"]
    labels = {names.MODEL_LABEL: model.name, names.ROLE_LABEL: "reserve", "app": name}
    resources = copy.deepcopy(source["containers"][0]["resources"])
    pod: Obj = {
        "priorityClassName": names.RESERVE_CLASS,
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "nodeSelector": copy.deepcopy(source["nodeSelector"]),
        "tolerations": copy.deepcopy(source["tolerations"]),
        "containers": [{"name": "reserve", "image": PAUSE_IMAGE, "resources": resources}],
    }
    if "affinity" in source:
        pod["affinity"] = copy.deepcopy(source["affinity"])
    return {
        "apiVersion": kinds.APPS,
        "kind": "Deployment",
        "metadata": names.metadata(tenant, name, **{names.ROLE_LABEL: "reserve"}),
        "spec": {
            "replicas": tenant.standby_pods,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }
