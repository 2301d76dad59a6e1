"""What the run controller may do, as Kubernetes PolicyRules: exactly the requests its
lifecycle makes (records, code and cancel ConfigMaps; creating and deleting attempts; reading
Kueue's Workloads and the pods; its Lease), in each namespace it manages, plus creating the
cluster-scoped objects of shared data volumes."""

from __future__ import annotations

from gkeml_sdk.backends.kubernetes.controller.liveness import LEASE_NAME

READ = ("get", "list", "watch")

# A Role in every managed namespace.
RUN_CONTROLLER_RULES: tuple[dict[str, object], ...] = (
    # Run records, code ConfigMaps (applied with each attempt) and cancel markers.
    {
        "apiGroups": [""],
        "resources": ["configmaps"],
        "verbs": [*READ, "create", "update", "patch", "delete"],
    },
    # Attempts are created (never applied over) and deleted before the next one.
    {
        "apiGroups": ["jobset.x-k8s.io"],
        "resources": ["jobsets"],
        "verbs": [*READ, "create", "delete"],
    },
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": [*READ, "create", "delete"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": list(READ)},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": list(READ)},
    # Where a queued run waits (Kueue's visibility API), for its status message.
    {
        "apiGroups": ["visibility.kueue.x-k8s.io"],
        "resources": ["localqueues/pendingworkloads"],
        "verbs": ["get"],
    },
    # Shared data volumes a job names are created when missing, never changed.
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "create"]},
    # Leader election: create cannot be limited to a name, get and update can.
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
    {
        "apiGroups": ["coordination.k8s.io"],
        "resources": ["leases"],
        "resourceNames": [LEASE_NAME],
        "verbs": ["get", "update"],
    },
)

# A ClusterRole: the cluster-scoped half of shared data volumes.
RUN_CONTROLLER_CLUSTER_RULES: tuple[dict[str, object], ...] = (
    {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "create"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["get", "create"]},
)
