"""How GKE exposes NVIDIA GPUs to pods: node labels, the extended resource, the taint, and
the limits of GPU sharing (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus,
https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus)."""

from __future__ import annotations

ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
SHARING_STRATEGY_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
MAX_SHARED_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
GPU_RESOURCE = "nvidia.com/gpu"
GPU_TAINT_KEY = "nvidia.com/gpu"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

# GPU sharing (time-sharing and MPS): clients per physical GPU, for both strategies.
MIN_SHARED_CLIENTS = 2
MAX_SHARED_CLIENTS = 48
# Node label spellings differ between GKE pages; match both.
SHARING_LABEL_VALUES = {"time-sharing": ("time-sharing", "TIME_SHARING"), "mps": ("mps", "MPS")}
# Kubernetes' node architecture label; GKE also taints Arm nodes with it (NoSchedule).
ARCH_LABEL = "kubernetes.io/arch"
DEFAULT_ARCH = "amd64"
