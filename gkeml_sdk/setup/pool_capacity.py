"""The capacities a set of node pools offers: one per kind of node a flavor can tell apart, in
each mode (reservation, on-demand, Spot, DWS) one of its pools provides."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.scheduling.catalog import MODES, CapacityMode
from gkeml_sdk.scheduling.rules import capacity_mode

if TYPE_CHECKING:
    from gkeml_sdk.setup.capacity_model import Capacity, PoolOffer


def capacities_of_pools(
    capacity: type[Capacity], pools: Iterable[PoolOffer], topology: bool
) -> list[Capacity]:
    """See `Capacity.from_node_pools`; modes come in the catalog's preference order."""
    # Pools whose nodes a flavor cannot tell apart (h100 x4 and x8 machines carry the same
    # labels) are one capacity: grouped by the capacity name, the first pool's hardware.
    hardware: dict[str, Accelerator | TpuSlice] = {}
    modes: dict[str, set[CapacityMode]] = {}
    reserved: dict[str, str] = {}
    for pool in pools:
        name = capacity(accelerator=pool.hardware).name
        hardware.setdefault(name, pool.hardware)
        found: CapacityMode = capacity_mode(pool.spot, pool.provisioning)
        if pool.reservation is not None:
            found = "reservation"
            reserved.setdefault(name, pool.reservation)
        modes.setdefault(name, set()).add(found)
    return [
        capacity(accelerator=hardware[name], provisioning=tuple(m for m in MODES if m in found),
                 topology=topology, reservation=reserved.get(name))
        for name, found in modes.items()
    ]  # fmt: skip
