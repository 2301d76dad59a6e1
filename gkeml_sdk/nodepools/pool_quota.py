"""What a node pool at its autoscaling ceiling asks of the project's Compute Engine quotas
(`hardware.quota_needs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.hardware.quota_needs import QuotaAsk

if TYPE_CHECKING:
    from gkeml_sdk.nodepools.fields import NodePoolFields


def pool_quota_ask(pool: NodePoolFields) -> QuotaAsk | None:
    """The GPUs (or TPU chips) of all the pool's nodes at its ceiling, over every slice of a
    multislice; None for a pool consuming a reservation, whose VMs' quota Compute Engine
    took when the reservation was created, and for a pool without accelerators.

    Example:
        >>> from gkeml_sdk import Accelerator, NodePool
        >>> pool_quota_ask(NodePool(name="h", hardware=Accelerator("h100", count=8),
        ...                         max_nodes=2, spot=True))
        QuotaAsk(name='pool h', key='h100', gpu=True, preemptible=True, units=16)
    """
    shape = pool.shape
    # No accelerator to count (a CPU machine row: its vCPU quotas are not read here).
    if pool.reservation is not None or not shape.quota_units:
        return None
    return QuotaAsk(
        f"pool {pool.name}",
        pool.hardware.billing(1).key,  # the catalog key: h100, v5e
        gpu=shape.accelerator_type is not None,
        preemptible=pool.spot or pool.provisioning != "standard",
        units=shape.quota_units * pool.node_bounds[1] * shape.pools,
    )
