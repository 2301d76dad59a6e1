"""What the run controller may do, as Kubernetes PolicyRules: exactly the requests it makes,
namespaced. A Role in each namespace it manages (records read and compare-and-swapped, attempts
created and deleted, Kueue's Workloads and the pods read), a Role in its own namespace for its
one Lease, and a Role there that lets every authenticated user read that Lease (a client asks
it whether a controller acts before acting itself). Nothing cluster-scoped: shared data volumes
are created by the submission with the submitter's rights; the controller only checks their
claims (docs/controller.md, "RBAC")."""

from __future__ import annotations

from gkeml_sdk.backends.kubernetes.runs.liveness import LEASE_NAME

READ = ["get", "list", "watch"]
_LEASES = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"]}

# A Role in every managed namespace.
RUN_CONTROLLER_RULES: tuple[dict[str, list[str]], ...] = (
    # Run records: read and watched; saved as an update carrying the resourceVersion read
    # (compare-and-swap), deleted with uid/resourceVersion preconditions. Never created: a
    # record is the submitter's, so a controller cannot forge one (or a cancel marker).
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": [*READ, "update", "delete"]},
    # Attempts: created under a name a record update reserved, deleted with preconditions.
    {
        "apiGroups": ["jobset.x-k8s.io"],
        "resources": ["jobsets"],
        "verbs": [*READ, "create", "delete"],
    },
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": [*READ, "create", "delete"]},
    # How an attempt goes: its pods and Kueue's Workload, read only.
    {"apiGroups": [""], "resources": ["pods"], "verbs": READ},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": READ},
    # Where a queued run waits (Kueue's visibility API), for its status message.
    {
        "apiGroups": ["visibility.kueue.x-k8s.io"],
        "resources": ["localqueues/pendingworkloads"],
        "verbs": ["get"],
    },
    # A later attempt checks the claims of its shared data volumes still exist.
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get"]},
)

# A Role in the controller's own namespace: its one Lease. A create cannot be narrowed to a
# name (the name is in the body, not the URL), so it is allowed in this namespace only.
RUN_CONTROLLER_LEASE_RULES: tuple[dict[str, list[str]], ...] = (
    {**_LEASES, "verbs": ["create"]},
    # Read and renewed by polling (the elector never watches it).
    {**_LEASES, "resourceNames": [LEASE_NAME], "verbs": ["get", "update"]},
)

# A Role in the controller's namespace bound to system:authenticated: anyone may read (only)
# the one Lease, because every client asks it whether a controller acts for its namespace
# before it follows a run itself; a client denied this read acts itself, beside the controller.
LEASE_READER_RULES: tuple[dict[str, list[str]], ...] = (
    {**_LEASES, "resourceNames": [LEASE_NAME], "verbs": ["get"]},
)
