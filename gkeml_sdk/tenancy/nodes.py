"""Where a tenant's pods run: an exclusive tier's tenant gets node pools of its own (never
Spot), labelled and tainted with its name so only its pods, which carry the one matching
toleration, land there; a shared tier shares one pool per GPU partitioning (MIG or
time-sharing, the accelerator's own); a preemptible tier shares a Spot pool per GPU (GKE:
"Taints and tolerations", "Spot VMs", "About GPU sharing strategies")."""

from __future__ import annotations

import copy
import hashlib
from typing import TYPE_CHECKING

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.quantity import parse_quantity
from gkeml_sdk.core.rules import slug
from gkeml_sdk.nodepools.model import NodePool, NodeTaint

if TYPE_CHECKING:
    from gkeml_sdk.tenancy.fields import TenantFields, TenantModel

DEDICATED_KEY = "gkeml.dev/dedicated-to"  # node label and taint key; the value is the tenant
POOL_NAME_MAX = 40
_DIGEST_CHARS = 6  # ends a name cut to fit: 16 million to one against two cut names meeting


def dedicated(tenant: TenantFields) -> bool:
    """True when the tenant's tier promises nodes of its own.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> [dedicated(t) for t in load_specs("examples/tenants.yaml")]
        [True, False, False]
    """
    return tenant.tier.isolation == "exclusive"


def toleration(tenant: TenantFields) -> Obj:
    """The toleration of the tenant's own taint (only its pods carry it)."""
    return {"key": DEDICATED_KEY, "operator": "Equal", "value": tenant.name, "effect": "NoSchedule"}


def pin(tenant: TenantFields, workload: Obj) -> Obj:
    """A copy of a Deployment (or placeholder) whose pods select and tolerate the tenant's
    dedicated nodes; unchanged for a tenant without them."""
    if not dedicated(tenant):
        return workload
    pinned = copy.deepcopy(workload)
    pod = pinned["spec"]["template"]["spec"]
    pod["nodeSelector"] = {**pod.get("nodeSelector", {}), DEDICATED_KEY: tenant.name}
    pod["tolerations"] = [*pod.get("tolerations", []), toleration(tenant)]
    return pinned


def pool_name(tenant: TenantFields, model: TenantModel) -> str:
    """The node pool a model's pods run on.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> a, b, c = load_specs("examples/tenants.yaml")
        >>> pool_name(a, a.models[0]), pool_name(b, b.models[0]), pool_name(c, c.models[0])
        ('tenant-a-nvidia-l4', 'gkeml-shared-nvidia-a100-2g-10gb', 'gkeml-spot-nvidia-l4')
    """
    acc = model.model.accelerator
    gpu = acc.gpu.label.removeprefix("nvidia-tesla-").removeprefix("nvidia-")
    part = acc.mig or (f"{acc.sharing}-{acc.clients_per_gpu}" if acc.sharing else "")
    if dedicated(tenant):
        name = f"{tenant.name}-nvidia-{gpu}"
    elif tenant.tier.isolation == "shared":
        name = f"gkeml-shared-nvidia-{gpu}-{part}" if part else f"gkeml-shared-nvidia-{gpu}"
    else:
        name = f"gkeml-{'spot' if model.model.spot else 'preemptible'}-nvidia-{gpu}"
    return _fitted(slug(name, empty="pool"))


def _fitted(name: str) -> str:
    """`name` within `POOL_NAME_MAX`: a longer one is cut and ends in a digest of all of it,
    so two tenants whose names share the first characters never share a "dedicated" pool."""
    if len(name) <= POOL_NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_DIGEST_CHARS]
    return f"{name[: POOL_NAME_MAX - _DIGEST_CHARS - 1].rstrip('-')}-{digest}"


def node_pools(tenant: TenantFields) -> list[NodePool]:
    """One pool per distinct pool name of the tenant's models, sized to its GPU quota, whose
    nodes hold the largest weights cache among the models it runs."""
    pools: dict[str, NodePool] = {}
    caches: dict[str, int] = {}
    for model in tenant.models:
        cache = model.model.ephemeral_storage
        name = pool_name(tenant, model)
        caches[name] = max(caches.get(name, 0), int(parse_quantity(cache)) if cache else 0)
    for model in tenant.models:
        name = pool_name(tenant, model)
        if name in pools:
            continue
        acc = model.model.accelerator
        per_node = max(acc.pool_shape().accelerator_count, 1)
        options: dict[str, object] = {
            "spot": tenant.tier.isolation == "preemptible" and model.model.spot,
            "max_nodes": max(-(-tenant.gpu_quota // per_node), 1),
        }
        if dedicated(tenant):
            options["labels"] = {DEDICATED_KEY: tenant.name}
            options["taints"] = (NodeTaint(key=DEDICATED_KEY, value=tenant.name),)
        storage = str(caches[name]) if caches[name] else None
        pools[name] = NodePool.for_accelerator(acc, name=name, ephemeral_storage=storage, **options)
    return list(pools.values())
