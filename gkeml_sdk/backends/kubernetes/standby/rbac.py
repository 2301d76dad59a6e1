"""What the tenant standby manager may do, as Kubernetes PolicyRules (a ClusterRole: it
watches pods and Deployments in every tenant namespace), read from the requests its code
makes: failover patches Deployments and pods and applies routes, the status book keeps a
ConfigMap per tenant and records Events, leader election holds a Lease."""

from __future__ import annotations

READ = ("get", "list", "watch")

STANDBY_MANAGER_RULES: tuple[dict[str, object], ...] = (
    {"apiGroups": [""], "resources": ["pods"], "verbs": [*READ, "patch"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": [*READ, "create", "patch"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": [*READ, "create", "update"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    {
        "apiGroups": ["networking.istio.io"],
        "resources": ["virtualservices"],
        "verbs": [*READ, "create", "patch"],
    },
    {
        "apiGroups": ["gateway.networking.k8s.io"],
        "resources": ["httproutes"],
        "verbs": [*READ, "create", "patch"],
    },
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "verbs": ["get", "create", "update"],
    },
)
