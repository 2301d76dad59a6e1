"""The rules a tenant must follow: isolation matches the GPUs, routing and egress are
well-formed, and the GPU quota covers what the tier keeps running (a `TenantModel` checks its
own weight and replicas)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail

if TYPE_CHECKING:
    from gkeml_sdk.serving.fields import ServeFields
    from gkeml_sdk.tenancy.fields import TenantFields, TenantModel

# HTTPRoute holds at most 16 rules: one per model and the tenant's by-weight rule.
MAX_GATEWAY_MODELS = 15


def check_models(tenant: TenantFields) -> None:
    """Unique names, isolation per tier, warm standbys only on engines that sleep, quota."""
    names = [m.name for m in tenant.models]
    if len(set(names)) != len(names):
        raise fail(
            f"tenant {tenant.name!r} lists a model name twice: {names}",
            rule="each model has one Deployment, Service and route",
            fix="give each ServeModel its own name",
            field="models",
        )
    for model in tenant.models:
        _check_isolation(tenant, model)
        engine = model.model.engine_row
        if tenant.tier.standby_level == "warm" and engine.sleep_mode is None:
            raise fail(
                f"model {model.name!r}: {engine.display} cannot keep a warm standby asleep",
                rule="a warm standby is a started server with its weights off the GPU "
                "(vLLM's sleep mode), woken on failover",
                fix="engine='vllm', or a tier with standby_level='hot' or 'cold'",
                field="models",
            )
    if tenant.reserved_gpus > tenant.gpu_quota:
        per_model = ", ".join(
            f"{m.name}: ({m.min_replicas} + {tenant.standby_pods}) x {m.gpus_per_replica}"
            for m in tenant.models
        )
        raise fail(
            f"tenant {tenant.name!r}: gpu_quota={tenant.gpu_quota} is below the "
            f"{tenant.reserved_gpus} GPUs its minimum replicas and standbys hold ({per_model})",
            rule="the namespace's ResourceQuota refuses pods beyond the quota, so a standby "
            "or a minimum replica would stay Pending",
            fix=f"gpu_quota={tenant.reserved_gpus} or more, or fewer standbys or min_replicas",
            field="gpu_quota",
        )


def _check_isolation(tenant: TenantFields, model: TenantModel) -> None:
    acc, tier = model.model.accelerator, tenant.tier
    shared = acc.mig is not None or acc.sharing is not None
    where = f"tenant {tenant.name!r} (tier {tier.name}), model {model.name!r}"
    if tier.isolation == "exclusive" and shared:
        mode = f"mig={acc.mig!r}" if acc.mig else f"sharing={acc.sharing!r}"
        raise fail(
            f"{where}: {mode} shares a GPU",
            rule="an exclusive tier gets whole GPUs: MIG slices, time-sharing and MPS put "
            "other pods on the same GPU",
            fix=f"Accelerator({acc.model!r}, count=N) without mig/sharing, or tier='B'",
            field="models",
        )
    if tier.isolation == "shared" and not shared:
        raise fail(
            f"{where}: whole GPUs on a shared tier",
            rule="a shared tier packs models onto GPUs (MIG, time-sharing or MPS)",
            fix="a MIG slice, e.g. Accelerator('a100-40gb', mig='2g.10gb') (model servers "
            "refuse time-shared GPUs), or tier='A'",
            field="models",
        )
    if tier.isolation == "exclusive" and model.model.spot:
        raise fail(
            f"{where}: spot=True on an exclusive tier",
            rule="an exclusive tier runs on dedicated on-demand nodes; a Spot VM may be "
            "reclaimed with 30 s notice and its capacity given to anyone",
            fix="drop spot=True, or tier='C'",
            field="models",
        )
    if tier.isolation == "preemptible" and not (model.model.spot or tier.preemptible):
        raise fail(
            f"{where}: neither Spot nor a preemptible priority (priority={tier.priority})",
            rule="a preemptible tier runs on Spot VMs or at a priority (<= 1000) that a "
            "normal tier preempts",
            fix="spot=True on the ServeModel, or Tier(..., priority=10)",
            field="models",
        )


# Namespaces no tenant may take: a tenant's namespace is walled in (default-deny
# NetworkPolicies, a GPU quota) and labelled as the tenant's, which would cut or claim what
# else runs there (cluster DNS in kube-system, Leases in kube-node-lease, the controller).
SYSTEM_NAMESPACES = (
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "gkeml-system",
    "istio-system",
    "kueue-system",
    "jobset-system",
    "gmp-system",
    "gke-gmp-system",
    "gke-managed-system",
)
RESERVED_PREFIXES = ("kube-", "gke-")  # Kubernetes' and GKE's own


def check_namespace(tenant: TenantFields) -> None:
    """A tenant's namespace is its own: not a system or shared one, not its gateway's."""
    ns = tenant.namespace
    if ns in SYSTEM_NAMESPACES or ns.startswith(RESERVED_PREFIXES):
        raise fail(
            f"tenant {tenant.name!r}: namespace {ns!r} is a system or shared namespace",
            rule="a tenant's namespace gets default-deny NetworkPolicies, a GPU quota and the "
            "tenant's labels, which would cut or claim everything else running there (cluster "
            f"DNS in kube-system); {', '.join(SYSTEM_NAMESPACES)} and names starting with "
            f"{' or '.join(RESERVED_PREFIXES)} are refused",
            fix=f"namespace={tenant.name!r} (a namespace of the tenant's own)",
            field="namespace",
        )
    if ns == tenant.gateway_namespace:
        raise fail(
            f"tenant {tenant.name!r}: namespace {ns!r} is its gateway's ({tenant.gateway})",
            rule="the gateway serves every tenant; walling it into one tenant's namespace cuts "
            "the others' traffic",
            fix=f"namespace={tenant.name!r}",
            field="namespace",
        )


def check_tenants(tenants: Iterable[TenantFields]) -> None:
    """Tenants managed together: unique names, a namespace each, and none in another's
    gateway namespace. (Their cluster-scoped priority classes are named by tier and value,
    so tenants cannot define one two ways; `tenant apply` compares what the cluster holds.)"""
    tenants = list(tenants)
    by_name: dict[str, TenantFields] = {}
    by_namespace: dict[str, TenantFields] = {}
    gateways = {t.gateway_namespace: t for t in reversed(tenants)}
    for tenant in tenants:
        if tenant.name in by_name:
            raise fail(
                f"two tenants are named {tenant.name!r}",
                rule="a tenant's name names its ClusterQueue, flavors and node pools",
                fix="give each tenant its own name",
                field="name",
            )
        by_name[tenant.name] = tenant
        first = by_namespace.setdefault(tenant.namespace, tenant)
        if first is not tenant:
            raise fail(
                f"tenants {first.name!r} and {tenant.name!r} both name namespace "
                f"{tenant.namespace!r}",
                rule="a namespace holds one tenant's quota, NetworkPolicies and route; a second "
                "tenant's would replace the first's",
                fix=f"namespace={tenant.name!r} for {tenant.name!r}",
                field="namespace",
            )
        owner = gateways.get(tenant.namespace)
        if owner is not None:
            raise fail(
                f"tenant {tenant.name!r}: namespace {tenant.namespace!r} is the gateway "
                f"namespace of tenant {owner.name!r} ({owner.gateway})",
                rule="the gateway serves every tenant; walling it into one tenant's namespace "
                "cuts the others' traffic",
                fix=f"namespace={tenant.name!r}",
                field="namespace",
            )


def check_egress(tenant: TenantFields) -> None:
    """Declared egress ranges are CIDRs, and models that download from the Hugging Face Hub
    have a range to download through (the tenant's default-deny policy blocks the rest)."""
    hub = [m.name for m in tenant.models if hub_download(m.model)]
    if hub and not tenant.weight_sources:
        raise fail(
            f"tenant {tenant.name!r}: {', '.join(hub)} download their weights from the Hugging "
            "Face Hub, but the tenant's egress policy lets HTTPS out only to the Google API "
            f"ranges {', '.join(tenant.google_api_cidrs)}",
            rule="a tenant's default-deny NetworkPolicy lets egress out by IP range, and the "
            "Hugging Face Hub publishes none",
            fix="weight_sources=['CIDR of your egress proxy or Hub mirror'] (['0.0.0.0/0'] lets "
            "HTTPS out anywhere), or weights=GcsFuse(...) on each of those models (Cloud "
            "Storage, reached through the Google API ranges)",
            field="weight_sources",
        )
    for field in ("weight_sources", "google_api_cidrs"):
        for cidr in getattr(tenant, field):
            try:
                ipaddress.ip_network(cidr)
            except ValueError:
                raise fail(
                    f"{field}: {cidr!r} is not a CIDR range",
                    rule="NetworkPolicy egress rules name IP ranges (no host names)",
                    fix="e.g. '199.36.153.8/30'",
                    field=field,
                ) from None


def hub_download(svc: ServeFields) -> bool:
    """True when the model server downloads its weights from the Hugging Face Hub."""
    return svc.weights is None and svc.engine_row.downloads_weights


def check_routing(tenant: TenantFields) -> None:
    """The Inference Gateway needs the proxy-only subnet and fits 15 models per route."""
    if tenant.routing != "inference-gateway":
        if tenant.gateway_cidrs:
            raise fail(
                "gateway_cidrs apply to routing='inference-gateway'",
                rule="Istio's gateway pods reach the tenant from their namespace",
                fix="drop gateway_cidrs, or routing='inference-gateway'",
                field="gateway_cidrs",
            )
        return
    if not tenant.gateway_cidrs:
        raise fail(
            f"tenant {tenant.name!r}: routing='inference-gateway' without gateway_cidrs",
            rule="GKE's regional load balancers reach pods from the region's proxy-only "
            "subnet, which the tenant's default-deny NetworkPolicy otherwise blocks",
            fix="gateway_cidrs=['10.129.0.0/23'] (your proxy-only subnet's range)",
            field="gateway_cidrs",
        )
    for cidr in tenant.gateway_cidrs:
        try:
            ipaddress.ip_network(cidr)
        except ValueError:
            raise fail(
                f"gateway_cidrs: {cidr!r} is not a CIDR range",
                fix="e.g. '10.129.0.0/23'",
                field="gateway_cidrs",
            ) from None
    if len(tenant.models) > MAX_GATEWAY_MODELS:
        raise fail(
            f"tenant {tenant.name!r}: {len(tenant.models)} models on the Inference Gateway",
            rule="an HTTPRoute holds 16 rules: one per model plus the tenant's by-weight rule",
            fix=f"at most {MAX_GATEWAY_MODELS} models per tenant, or routing='istio'",
            field="models",
        )
