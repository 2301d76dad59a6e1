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

# A Role in every managed namespace, unless installed with --no-rollouts: the serving
# rollouts it drives. It moves a service only between the two specs its submitter applied
# (rollout_objects.vouched), so these rights never run what its requester could not.
_SERVING_WRITES = ["get", "create", "patch", "delete"]  # read before, applied as read
ROLLOUT_RULES: tuple[dict[str, list[str]], ...] = (
    # A service's own objects at the version a phase wants (server, its route, autoscaler,
    # disruption budget, scrape config), and its canary: created, applied over the
    # resourceVersion read, deleted with preconditions.
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": _SERVING_WRITES},
    {
        "apiGroups": ["leaderworkerset.x-k8s.io"],
        "resources": ["leaderworkersets"],
        "verbs": _SERVING_WRITES,
    },
    {"apiGroups": [""], "resources": ["services"], "verbs": _SERVING_WRITES},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _SERVING_WRITES},
    {
        "apiGroups": ["autoscaling"],
        "resources": ["horizontalpodautoscalers"],
        "verbs": _SERVING_WRITES,
    },
    {"apiGroups": ["keda.sh"], "resources": ["scaledobjects"], "verbs": _SERVING_WRITES},
    {
        "apiGroups": ["monitoring.googleapis.com"],
        "resources": ["podmonitorings"],
        "verbs": _SERVING_WRITES,
    },
    {
        "apiGroups": ["networking.istio.io"],
        "resources": ["virtualservices", "destinationrules"],
        "verbs": _SERVING_WRITES,
    },
    {"apiGroups": ["gateway.networking.k8s.io"], "resources": ["httproutes"],
     "verbs": _SERVING_WRITES},
    {
        "apiGroups": ["networking.gke.io"],
        "resources": ["gcpbackendpolicies", "healthcheckpolicies"],
        "verbs": _SERVING_WRITES,
    },
    {
        "apiGroups": ["inference.networking.k8s.io"],
        "resources": ["inferencepools"],
        "verbs": _SERVING_WRITES,
    },
    # A canary is judged on its engine's own counters: GET /metrics through the pods proxy.
    {"apiGroups": [""], "resources": ["pods/proxy"], "verbs": ["get"]},
)  # fmt: skip

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
