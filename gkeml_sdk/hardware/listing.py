"""The hardware catalog as public listings: every GPU model and TPU generation gkeml knows,
with GKE's label values, shapes and memory, for tables and pickers."""

from __future__ import annotations

from gkeml_sdk.hardware import gpus, tpus
from gkeml_sdk.hardware.gpu_row import GpuModel
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.tpus import TPUS, TpuGeneration


def gpu_models() -> tuple[GpuModel, ...]:
    """Every GPU model, in catalog order: short name (`key`), `gke-accelerator` label, memory,
    machine types and MIG profiles.

    Example:
        >>> from gkeml_sdk import gpu_models
        >>> h100 = next(g for g in gpu_models() if g.key == "h100")
        >>> h100.label, h100.memory_gb, h100.counts[-1]
        ('nvidia-h100-80gb', 80, 8)
    """
    return GPUS


def tpu_generations() -> tuple[TpuGeneration, ...]:
    """Every TPU generation, in catalog order: short name (`key`), `gke-tpu-accelerator`
    label, topologies and hosts per topology.

    Example:
        >>> from gkeml_sdk import tpu_generations
        >>> v5e = next(t for t in tpu_generations() if t.key == "v5e")
        >>> v5e.label, v5e.hosts("4x4")
        ('tpu-v5-lite-podslice', 4)
    """
    return TPUS


def accelerator_resources() -> tuple[str, ...]:
    """Every extended resource a catalog row's pods request, GPUs' first, once each: for
    code that reads pods or scheduler messages with no hardware object in hand.

    Example:
        >>> accelerator_resources()
        ('nvidia.com/gpu', 'google.com/tpu')
    """
    # Read at call time: the catalog as it is now.
    names = [*(g.resource for g in gpus.GPUS), *(t.resource for t in tpus.TPUS)]
    return tuple(dict.fromkeys(names))


def accelerator_labels() -> tuple[str, ...]:
    """Every node label key a catalog row selects its nodes by (the GPU model's or the TPU
    generation's, not topology or partition), GPUs' first, once each.

    Example:
        >>> accelerator_labels()
        ('cloud.google.com/gke-accelerator', 'cloud.google.com/gke-tpu-accelerator')
    """
    keys = [*(g.selector_label for g in gpus.GPUS), *(t.selector_label for t in tpus.TPUS)]
    return tuple(dict.fromkeys(keys))
