"""What the manager sees of one tenant's model: its primary's and standbys' pods, which are
ready, and the standby Deployment's replica count. Which standbys sleep is not in the pods:
the manager asks their engines (`standby.failover`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gkeml_sdk.core.objects import Obj, is_true, labels
from gkeml_sdk.hardware.listing import accelerator_labels, accelerator_resources
from gkeml_sdk.serving.catalog import SERVE_LABEL
from gkeml_sdk.tenancy import names
from gkeml_sdk.tenancy.model import Tenant, TenantModel

Key = tuple[str, str]


def ready(pod: Obj) -> bool:
    """Serving: the Ready condition is True and the pod is not being deleted.

    Example:
        >>> ready({"metadata": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
        True
    """
    return is_true(pod, "Ready") and not (pod.get("metadata") or {}).get("deletionTimestamp")


@dataclass(frozen=True)
class ModelView:
    """One model's pods and standby Deployment, as last seen."""

    primary_ready: int
    standby_ready: tuple[str, ...]  # names of ready standby pods
    standby_replicas: int | None  # the Deployment's spec.replicas; None when it is missing
    reserve_present: bool

    @classmethod
    def of(
        cls,
        tenant: Tenant,
        model: TenantModel,
        pods: Mapping[Key, Obj],
        deployments: Mapping[Key, Obj],
    ) -> ModelView:
        """Build the view from the watch caches."""
        ns = tenant.namespace
        standby = names.standby_name(model.name)
        mine = [p for (pns, _), p in pods.items() if pns == ns]
        primary = [p for p in mine if labels(p).get(SERVE_LABEL) == model.name and ready(p)]
        standbys = sorted(
            (p for p in mine if labels(p).get(SERVE_LABEL) == standby and ready(p)),
            key=lambda p: str(p["metadata"]["name"]),
        )
        deployment = deployments.get((ns, standby))
        replicas = None if deployment is None else int(deployment["spec"].get("replicas", 1))
        return cls(
            primary_ready=len(primary),
            standby_ready=tuple(p["metadata"]["name"] for p in standbys),
            standby_replicas=replicas,
            reserve_present=(ns, names.reserve_name(model.name)) in deployments,
        )


def allocations(tenant: Tenant, pods: Mapping[Key, Obj]) -> tuple[Obj, ...]:
    """GPU, node, memory, model and status of every GPU pod of the tenant."""
    memory = {m.name: _memory_gb(m) for m in tenant.models}
    # Pods of any hardware the catalog knows: its rows' label keys and resource names.
    label_keys, resource_names = accelerator_labels(), accelerator_resources()
    rows = []
    for (ns, name), pod in sorted(pods.items()):
        if ns != tenant.namespace:
            continue
        container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
        requests = (container.get("resources") or {}).get("requests") or {}
        node_selector = (pod.get("spec") or {}).get("nodeSelector") or {}
        model = labels(pod).get(names.MODEL_LABEL, "")
        rows.append(
            {
                "pod": name,
                "model": model,
                "role": labels(pod).get(names.ROLE_LABEL, ""),
                "gpu": _first(node_selector, label_keys, ""),
                "gpus": _first(requests, resource_names, 0),
                "node": (pod.get("spec") or {}).get("nodeName", ""),
                "memory_gb": memory.get(model, ""),
                "status": "Ready" if ready(pod) else (pod.get("status") or {}).get("phase", ""),
            }
        )
    return tuple(rows)


def _first(values: Mapping[str, Any], keys: tuple[str, ...], default: Any) -> Any:
    """The value of the first of `keys` that `values` holds, else `default`."""
    return next((values[key] for key in keys if key in values), default)


def _memory_gb(model: TenantModel) -> str:
    """GPU memory one replica holds (what standbys also carry in STANDBY_GPU_MEMORY_GB)."""
    fit = model.model.fit
    return "" if fit is None else str(round(fit.gpu_memory_gb * fit.gpus_per_pod * fit.pods, 1))
