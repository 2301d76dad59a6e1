"""`PoolShape`: what a node pool must be to carry one kind of hardware, read from its catalog
row. `Accelerator` and `TpuSlice` answer `pool_shape()`, so the node pool builder
(`gkeml_sdk.nodepools.manifests`) never asks which kind of hardware it has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class PoolShape:
    """The machine, accelerator and slice layout of a node pool for one hardware spec.

    `accelerator_type` is None when the machine type implies its accelerator (TPU VMs);
    `tpu_topology` is set for multi-host slices, whose pools hold exactly `fixed_nodes` VMs,
    one pool per slice (`pools`).

    Example:
        >>> from gkeml_sdk.hardware.tpu_slice import TpuSlice
        >>> s = TpuSlice("v5e", "4x4").pool_shape()
        >>> s.machine_type, s.tpu_topology, s.fixed_nodes, s.accelerator_type
        ('ct5lp-hightpu-4t', '4x4', 4, None)
    """

    display: str
    machine_type: str
    machine_types: tuple[str, ...]  # every machine type the user may name instead
    taint_key: str
    accelerator_type: str | None = None
    accelerator_count: int = 0
    gpu_partition_size: str | None = None
    sharing_strategy: str | None = None  # GPUSharingConfig enum name: TIME_SHARING, MPS
    clients_per_gpu: int = 0
    tpu_topology: str | None = None
    fixed_nodes: int | None = None
    pools: int = 1
    flex_start: bool = False
    compact_placement: bool = False
    workload_policy: bool = False  # multi-host placement through a workload policy (TPU7x)
    # What Compute Engine's quotas count of each node (GPUs, TPU chips), and how many units
    # of what its pods request it holds (MIG slices and shared GPUs multiply the GPUs).
    quota_units: int = 0
    request_units: int = 0


class PoolHardware(Protocol):
    """Hardware a node pool can be built for."""

    def pool_shape(self) -> PoolShape:
        """The node pool this hardware needs."""
        ...

    def check_provisioning(self, *, spot: bool) -> None:
        """Raise `SpecError` when the hardware cannot be had this way (on-demand or Spot)."""
        ...
