"""GPUs through Dynamic Resource Allocation (`Accelerator(..., allocation="dra")`): the device
requests a pod claims instead of `nvidia.com/gpu`, and the rules GKE sets for them
(https://cloud.google.com/kubernetes-engine/docs/concepts/about-dynamic-resource-allocation,
NVIDIA's DRA driver github.com/kubernetes-sigs/dra-driver-nvidia-gpu)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware.gpu_fields import Allocation

if TYPE_CHECKING:
    from gkeml_sdk.hardware.gpu_fields import GpuFields
GPU_CLASS = "gpu.nvidia.com"
# The Kueue configuration `resources.deviceClassMappings` gkeml setup asks for: DeviceClass ->
# the quota resource ClusterQueues cover (Kueue charges each request's `count` to it; Kueue
# docs "Dynamic Resource Allocation", kueue apis/config/v1beta2 DeviceClassMapping).
KUEUE_DEVICE_CLASSES = {GPU_CLASS: GPU_CLASS}
_ATTRS = "device.attributes['gpu.nvidia.com']"
# NVML reports a little less memory than the marketing size (an H100 80GB shows ~79.6 GiB).
_MEMORY_MARGIN = 0.85


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """One request of a ResourceClaim: `count` devices of `device_class` matching every CEL
    expression in `selectors`.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> r = Accelerator("h100", count=8, allocation="dra").device_requests()[0]
        >>> r.device_class, r.count
        ('gpu.nvidia.com', 8)
    """

    name: str
    device_class: str
    selectors: tuple[str, ...]
    count: int


def gpu_requests(acc: GpuFields) -> tuple[DeviceRequest, ...]:
    """What a pod of `acc` claims through DRA: whole GPUs of the model (MIG is refused with
    DRA); nothing for the device plugin.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> gpu_requests(Accelerator("l4", allocation="dra"))[0].selectors[0]
        "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA L4')"
    """
    if acc.allocation != "dra":
        return ()
    row = acc.gpu
    floor = int(row.memory_gb * _MEMORY_MARGIN)
    memory = f"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{floor}Gi')) >= 0"
    selectors = (f"{_ATTRS}.productName.startsWith('{row.nvml_name}')",) if row.nvml_name else ()
    return (DeviceRequest("gpu", GPU_CLASS, (*selectors, memory), acc.count),)


def check_dra(acc: GpuFields) -> None:
    """Refuse DRA where GKE does not offer it for `acc`."""
    if acc.allocation != "dra":
        return
    if acc.sharing is not None:
        raise fail(
            f"allocation='dra' with sharing={acc.sharing!r}",
            rule="GKE's GPU time-sharing and MPS are node pool features of the device plugin; "
            "GKE does not support them with DRA",
            fix="allocation='device-plugin' to share GPUs, or drop sharing",
            field="allocation",
        )
    if acc.mig is not None:
        raise fail(
            f"allocation='dra' with mig={acc.mig!r}",
            rule="GKE does not support MIG partitions (gpu_partition_size) on DRA node pools, "
            "and GKE documents no other way to make MIG instances for NVIDIA's DRA driver",
            fix="allocation='device-plugin' for MIG slices, or whole GPUs with DRA",
            field="allocation",
        )
    if acc.gpu.arch == "arm64":
        raise fail(
            f"allocation='dra' on {acc.gpu.display}",
            rule=f"on GKE {acc.gpu.label} GPUs stay on GKE's driver and device plugin; the "
            "NVIDIA DRA driver runs there for ComputeDomains (multi-node NVLink) only, which "
            "gkeml adds to multi-node jobs by itself",
            fix="allocation='device-plugin' (the default)",
            field="allocation",
        )


def refuse_for_serving(acc: GpuFields) -> None:
    """Model servers claim GPUs through the device plugin only (not built for DRA yet)."""
    if acc.allocation == "dra":
        raise fail(
            "allocation='dra' on a ServeModel",
            rule="gkeml compiles DRA claims for training jobs; model servers request "
            f"{acc.gpu.resource}",
            fix="allocation='device-plugin' for serving",
            field="allocation",
        )


def refuse_for_tpu(allocation: Allocation) -> None:
    """TPU slices take their chips through GKE's TPU device plugin here."""
    if allocation == "dra":
        raise fail(
            "allocation='dra' on a TPU slice",
            rule="the TPU DRA driver must claim all chips of each node (allocationMode All), "
            "which Kueue refuses to admit, and GKE documents DRA for GPUs only",
            fix="allocation='device-plugin' (the default) for TpuSlice",
            field="allocation",
        )
