"""Every apiVersion gkeml writes or reads, spelled once: builders and backends name these.

Upgrading Kueue from v1beta2, JobSet from v1alpha2 or any other API is a one-line change here
(the CRDs in ../shared/crds say which versions a cluster serves).

Example:
    >>> from gkeml_sdk.core import kinds
    >>> kinds.KUEUE, kinds.JOBSET, kinds.CORE
    ('kueue.x-k8s.io/v1beta2', 'jobset.x-k8s.io/v1alpha2', 'v1')
"""

from __future__ import annotations

# Kubernetes
CORE = "v1"
APPS = "apps/v1"
BATCH = "batch/v1"
POLICY = "policy/v1"
AUTOSCALING = "autoscaling/v2"
COORDINATION = "coordination.k8s.io/v1"
NETWORKING = "networking.k8s.io/v1"
RBAC = "rbac.authorization.k8s.io/v1"
SCHEDULING = "scheduling.k8s.io/v1"
STORAGE = "storage.k8s.io/v1"
RESOURCE = "resource.k8s.io/v1"
# Batch scheduling and multi-host serving (kubernetes-sigs)
KUEUE = "kueue.x-k8s.io/v1beta2"
KUEUE_VISIBILITY = "visibility.kueue.x-k8s.io/v1beta2"  # pending workloads, in queue order
JOBSET = "jobset.x-k8s.io/v1alpha2"
LWS = "leaderworkerset.x-k8s.io/v1"
PROVISIONING_REQUEST = "autoscaling.x-k8s.io/v1"
# Routing
GATEWAY = "gateway.networking.k8s.io/v1"
INFERENCE = "inference.networking.k8s.io/v1"
ISTIO_NETWORKING = "networking.istio.io/v1"
# GKE and NVIDIA
GKE_NETWORKING = "networking.gke.io/v1"
MANAGED_PROMETHEUS = "monitoring.googleapis.com/v1"
# Event-driven autoscaling (scale to zero)
KEDA = "keda.sh/v1alpha1"
GKE_DATALAYER = "datalayer.gke.io/v1"
NVIDIA_RESOURCE = "resource.nvidia.com/v1beta1"
