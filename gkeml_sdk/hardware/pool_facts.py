"""Facts about GKE node pools that no hardware, provisioning or network row owns: driver and
sharing enum names, the accelerator taint value, the reservation key and name limits
(https://cloud.google.com/kubernetes-engine/docs/how-to/gpus). Provisioning modes are rows
of `scheduling.catalog`, a machine type's GPUDirect needs rows of `hardware.network_stacks`."""

from __future__ import annotations

from typing import Literal

GpuDriver = Literal["latest", "default", "disabled"]
# GPUDriverInstallationConfig.GPUDriverVersion names, per gcloud spelling.
GPU_DRIVER_ENUM = {"latest": "LATEST", "default": "DEFAULT", "disabled": "INSTALLATION_DISABLED"}

# The taint value GKE's own accelerator pools carry (nvidia.com/gpu=present:NoSchedule).
ACCELERATOR_TAINT_VALUE = "present"
# The label key of a specific reservation (Compute Engine ReservationAffinity).
RESERVATION_KEY = "compute.googleapis.com/reservation-name"
# Node pool names: a lowercase letter, then up to 39 lowercase letters, digits or hyphens,
# not ending in a hyphen.
POOL_NAME_MAX = 40

# GPUSharingConfig.GPUSharingStrategy names, by `Accelerator(sharing=...)`.
SHARING_ENUM = {"time-sharing": "TIME_SHARING", "mps": "MPS"}

# Labels GKE puts on every node, and on GPU nodes whose driver it installs (absent with
# INSTALLATION_DISABLED: the driver-installer DaemonSet targets exactly those nodes).
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
DRIVER_LABEL = "cloud.google.com/gke-gpu-driver-version"
# GPUs through DRA (GKE "Set up DRA", node pool section): the first label turns GKE's device
# plugin off, the second matches the NVIDIA DRA kubelet plugin's node affinity, the third
# lets GKE's cluster autoscaler model the pool's ResourceSlices (scale from zero).
NO_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
DRA_NODE_LABELS = {
    NO_DEVICE_PLUGIN_LABEL: "true",
    "nvidia.com/gpu.present": "true",
    "cloud.google.com/gke-nvidia-gpu-dra-driver": "true",
}

# Kubelet graceful node shutdown on Spot nodes (NodeKubeletConfig.shutdown_grace_period_seconds,
# "only valid for Spot VMs", 0, 30 or 120): GKE's default 30 s gives regular pods 15 s and
# system-critical pods the last 15 s (GKE "Spot VMs": graceful termination).
CRITICAL_PODS_SHUTDOWN_SECONDS = 15
