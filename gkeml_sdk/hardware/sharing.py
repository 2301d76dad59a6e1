"""What sharing a GPU means for a pod: the limits each MPS client gets, and what time-sharing
and MPS clients risk (GKE "About GPU sharing strategies": no memory isolation, context
switching; "Share GPUs with multiple workloads using NVIDIA MPS": per-container limits)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gkeml_sdk.hardware.gpu_fields import GpuFields

# NVIDIA MPS client variables (NVIDIA "Multi-Process Service", environment variables): the
# share of the GPU's threads a client may use, and its pinned device memory per device index.
ACTIVE_THREADS = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
PINNED_MEMORY = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"


def mps_env(acc: GpuFields) -> dict[str, str]:
    """Each MPS container's fair share of its GPU, as limits MPS enforces on the client: the
    shares it holds out of `clients_per_gpu`, of the threads and of the memory.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> mps_env(Accelerator("l4", sharing="mps", clients_per_gpu=4))
        {'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE': '25', 'CUDA_MPS_PINNED_DEVICE_MEM_LIMIT': '0=6144MB'}
    """
    if acc.sharing != "mps" or not acc.clients_per_gpu:
        return {}
    clients, shares = acc.clients_per_gpu, acc.count
    megabytes = acc.gpu.memory_gb * 1024 * shares // clients
    return {
        ACTIVE_THREADS: str(max(1, 100 * shares // clients)),
        PINNED_MEMORY: f"0={megabytes}MB",  # one device: the pod's GPU is its device 0
    }


def sharing_notes(acc: GpuFields) -> list[str]:
    """What the clients of a shared GPU should know, one sentence each.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> [n[:29] for n in sharing_notes(Accelerator("l4", sharing="time-sharing",
        ...                                                 clients_per_gpu=4))]
        ['GPU time-sharing: up to 4 con']
    """
    clients = acc.clients_per_gpu
    if acc.sharing == "time-sharing":
        return [
            f"GPU time-sharing: up to {clients} containers take turns on each {acc.gpu.display} "
            "with no memory isolation: one that uses more than its share of GPU memory makes "
            "the others fail out of memory, and each slows down as the GPU switches contexts "
            "between them; keep each process's memory within "
            f"{acc.gpu.memory_gb / (clients or 1):g} GB"
        ]
    if acc.sharing == "mps":
        env = mps_env(acc)
        return [
            f"NVIDIA MPS: up to {clients} containers run at once on each {acc.gpu.display}; "
            f"each is limited to {ACTIVE_THREADS}={env[ACTIVE_THREADS]} and "
            f"{PINNED_MEMORY}={env[PINNED_MEMORY]} (set in the container; your env= overrides "
            "them), and a fatal GPU fault in one client can stop the others"
        ]
    return []
