"""A tenant's namespace and what walls it in: GPU ResourceQuota, LimitRange, default-deny
NetworkPolicies with the few allowed paths, and a least-privilege ServiceAccount and Role
(Kubernetes docs: "Resource Quotas", "Limit Ranges", "Network Policies", "Using RBAC")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.serving.catalog import SERVICE_PORT
from gkeml_sdk.serving.traffic import EPP_PORT
from gkeml_sdk.tenancy import names
from gkeml_sdk.tenancy.rules import hub_download

if TYPE_CHECKING:
    from gkeml_sdk.tenancy.fields import TenantFields

NS_NAME_LABEL = "kubernetes.io/metadata.name"
# Managed Prometheus collectors scrape the servers' metrics (Standard and Autopilot).
METRICS_NAMESPACES = ("gmp-system", "gke-gmp-system")
# Google Cloud load balancer health checks ("Health checks overview": firewall rules).
HEALTH_CHECKS = ("35.191.0.0/16", "130.211.0.0/22")
# The GKE metadata server (Workload Identity tokens for Cloud Storage).
METADATA_SERVER = "169.254.169.254/32"
RBAC_API = kinds.RBAC
NETPOL_API = kinds.NETWORKING


def isolation_objects(tenant: TenantFields) -> list[Obj]:
    """Namespace first (everything else lives in it), then quota, limits, policies, RBAC.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> [o["kind"] for o in isolation_objects(load_specs("examples/tenants.yaml")[0])][:4]
        ['Namespace', 'ResourceQuota', 'LimitRange', 'NetworkPolicy']
    """
    return [
        _namespace(tenant),
        _quota(tenant),
        _limits(tenant),
        *_network_policies(tenant),
        *_rbac(tenant),
    ]


def _namespace(tenant: TenantFields) -> Obj:
    meta = {"name": tenant.namespace, "labels": names.tenant_labels(tenant)}
    return {"apiVersion": kinds.CORE, "kind": "Namespace", "metadata": meta}


def _quota(tenant: TenantFields) -> Obj:
    # Extended resources are quota'd by their requests only ("requests." prefix); each name
    # the models' GPU rows request is held to the tenant's quota.
    hard = {f"requests.{name}": str(tenant.gpu_quota) for name in tenant.gpu_resources}
    spec = {"hard": hard}
    return {
        "apiVersion": kinds.CORE,
        "kind": "ResourceQuota",
        "metadata": names.metadata(tenant, "gpu-quota"),
        "spec": spec,
    }


def _limits(tenant: TenantFields) -> Obj:
    widest = {
        name: max(m.gpus_per_replica for m in tenant.models if m.gpu.resource == name)
        for name in tenant.gpu_resources
    }
    # A container that names no GPU gets none (default 0), rather than the max.
    limit = {
        "type": "Container",
        "max": {name: str(gpus) for name, gpus in widest.items()},
        "default": dict.fromkeys(widest, "0"),
        "defaultRequest": dict.fromkeys(widest, "0"),
    }
    return {
        "apiVersion": kinds.CORE,
        "kind": "LimitRange",
        "metadata": names.metadata(tenant, "gpu-limits"),
        "spec": {"limits": [limit]},
    }


def _policy(tenant: TenantFields, name: str, spec: Obj) -> Obj:
    return {
        "apiVersion": NETPOL_API,
        "kind": "NetworkPolicy",
        "metadata": names.metadata(tenant, name),
        "spec": {"podSelector": {}, **spec},
    }


def egress_notes(tenant: TenantFields) -> list[str]:
    """Where each model's weights come from through the tenant's egress policy, one sentence
    each (models on Hyperdisk ML read a disk and need none)."""
    notes = []
    for model in tenant.models:
        svc, where = model.model, f"{tenant.name}/{model.name}"
        if hub_download(svc):
            notes.append(
                f"{where}: downloads its weights from the Hugging Face Hub over HTTPS through "
                f"weight_sources {', '.join(tenant.weight_sources)} (the only ranges besides "
                "the Google APIs its egress policy lets out)"
            )
        elif svc.weights is not None and svc.weights.kind == "gcsfuse":
            notes.append(
                f"{where}: reads its weights from {svc.weights.source_uri} (Cloud Storage); its "
                f"egress policy lets HTTPS out to {', '.join(tenant.google_api_cidrs)} only "
                "(private.googleapis.com), so the VPC's DNS must resolve storage.googleapis.com "
                "there (Private Google Access: https://cloud.google.com/vpc/docs/"
                "private-google-access)"
            )
    return notes


def _from_namespace(namespace: str) -> Obj:
    return {"namespaceSelector": {"matchLabels": {NS_NAME_LABEL: namespace}}}


def _network_policies(tenant: TenantFields) -> list[Obj]:
    port = [{"protocol": "TCP", "port": SERVICE_PORT}]
    dns = {
        "to": [
            {
                **_from_namespace("kube-system"),
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
            }
        ],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }
    # HTTPS to what the tenant declared (its weight sources) and the Google APIs (Cloud
    # Storage, Artifact Registry), nothing else; the metadata server for Workload Identity.
    ranges = [*tenant.google_api_cidrs, *tenant.weight_sources]
    https = {
        "to": [{"ipBlock": {"cidr": cidr}} for cidr in ranges],
        "ports": [{"protocol": "TCP", "port": 443}],
    }
    metadata_server = {
        "to": [{"ipBlock": {"cidr": METADATA_SERVER}}],
        "ports": [{"protocol": "TCP", "port": 80}],
    }
    within: list[Obj] = [{"podSelector": {}}]
    callers = [_from_namespace(tenant.gateway_namespace), *map(_from_namespace, METRICS_NAMESPACES)]
    if tenant.routing == "inference-gateway":
        # The load balancer's proxies and Google's health checkers, to servers and pickers.
        callers += [{"ipBlock": {"cidr": c}} for c in (*tenant.gateway_cidrs, *HEALTH_CHECKS)]
        port = [*port, {"protocol": "TCP", "port": EPP_PORT}]
    return [
        _policy(tenant, "default-deny", {"policyTypes": ["Ingress", "Egress"]}),
        _policy(
            tenant,
            "allow-within-tenant",
            {
                "policyTypes": ["Ingress", "Egress"],
                "ingress": [{"from": within}],
                "egress": [{"to": within}],
            },
        ),
        _policy(
            tenant,
            "allow-gateway",
            {"policyTypes": ["Ingress"], "ingress": [{"from": callers, "ports": port}]},
        ),
        _policy(
            tenant,
            "allow-dns-and-weights",
            {"policyTypes": ["Egress"], "egress": [dns, https, metadata_server]},
        ),
    ]


def _rbac(tenant: TenantFields) -> list[Obj]:
    account = {
        "apiVersion": kinds.CORE,
        "kind": "ServiceAccount",
        "metadata": names.metadata(tenant, names.SERVICE_ACCOUNT),
        # Model servers never call the Kubernetes API: no token in their pods.
        "automountServiceAccountToken": False,
    }
    read = ["get", "list", "watch"]
    role = {
        "apiVersion": RBAC_API,
        "kind": "Role",
        "metadata": names.metadata(tenant, "tenant-reader"),
        # Read its own serving state; never quotas, limits, policies or queues.
        "rules": [
            {
                "apiGroups": [""],
                "resources": ["pods", "pods/log", "services", "events"],
                "verbs": read,
            },
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": read},
            {
                "apiGroups": ["autoscaling"],
                "resources": ["horizontalpodautoscalers"],
                "verbs": read,
            },
        ],
    }
    binding = {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": names.metadata(tenant, "tenant-reader"),
        "subjects": [
            {"kind": "ServiceAccount", "name": names.SERVICE_ACCOUNT, "namespace": tenant.namespace}
        ],
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "tenant-reader",
        },
    }
    return [account, role, binding]
