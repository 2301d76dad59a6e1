"""Facts about GKE node pools that no single hardware row owns: provisioning modes, the taints
and reservation key a pool carries, name limits, and the GPUDirect NIC layout each
accelerator-optimized machine type needs (https://cloud.google.com/kubernetes-engine/docs/
how-to/gpu-bandwidth-gpudirect-tcpx, https://cloud.google.com/compute/docs/gpus)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# How a node pool gets its VMs: on-demand (or a reservation), flex-start (Dynamic Workload
# Scheduler, up to 7 days), or flex-start with queued provisioning (all nodes at once, through
# a ProvisioningRequest). Spot is a separate switch, as on `TrainingJob(spot=True)`.
Provisioning = Literal["standard", "flex-start", "queued"]
PROVISIONING_MODES: tuple[Provisioning, ...] = ("standard", "flex-start", "queued")

GpuDriver = Literal["latest", "default", "disabled"]
# GPUDriverInstallationConfig.GPUDriverVersion names, per gcloud spelling.
GPU_DRIVER_ENUM = {"latest": "LATEST", "default": "DEFAULT", "disabled": "INSTALLATION_DISABLED"}

# The taint value GKE's own accelerator pools carry (nvidia.com/gpu=present:NoSchedule).
ACCELERATOR_TAINT_VALUE = "present"
SPOT_TAINT_VALUE = "true"
# The label key of a specific reservation (Compute Engine ReservationAffinity).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
# GKE adds this taint to queued-provisioning pools itself; pods tolerate it, pools never set it.
QUEUED_TAINT_KEY = "cloud.google.com/gke-queued"

# Node pool names: a lowercase letter, then up to 39 lowercase letters, digits or hyphens,
# not ending in a hyphen.
POOL_NAME_MAX = 40
# Flex-start VMs (and so queued provisioning) run at most 7 days.
FLEX_START_MAX_RUN_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class MachineNetworking:
    """What a machine type needs of its node pool for GPUDirect: gVNIC, the GPUDirect strategy
    GKE sets (`RDMA`, or None when the stack runs in pods), and extra VPC networks, one per
    extra NIC.

    Example:
        >>> networking("a3-megagpu-8g").additional_networks
        8
    """

    technology: str
    gvnic: bool
    additional_networks: int
    gpu_direct_strategy: str | None = None


_NETWORKING: dict[str, MachineNetworking] = {
    "a3-highgpu-8g": MachineNetworking("GPUDirect-TCPX", True, 4),
    "a3-megagpu-8g": MachineNetworking("GPUDirect-TCPXO", True, 8),
    # RDMA: one extra gVNIC network plus one RDMA network per CX-7 NIC.
    "a3-ultragpu-8g": MachineNetworking("GPUDirect-RDMA", True, 9, "RDMA"),
    "a4-highgpu-8g": MachineNetworking("GPUDirect-RDMA", True, 9, "RDMA"),
    "a4x-highgpu-4g": MachineNetworking("GPUDirect-RDMA", True, 5),
}


def networking(machine_type: str) -> MachineNetworking | None:
    """The GPUDirect needs of `machine_type`, or None when it has no multi-NIC GPU path."""
    return _NETWORKING.get(machine_type)


# GPUSharingConfig.GPUSharingStrategy names, by `Accelerator(sharing=...)`.
SHARING_ENUM = {"time-sharing": "TIME_SHARING", "mps": "MPS"}
