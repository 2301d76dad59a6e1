"""What a cluster setup's capacities ask of the project's Compute Engine quotas
(`hardware.quota_needs`): each mode's flavor admits the teams' summed quota at once."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gkeml_sdk.hardware.quota_needs import QuotaAsk

if TYPE_CHECKING:
    from gkeml_sdk.setup.fields import ClusterSetupFields


def setup_quota_asks(setup: ClusterSetupFields) -> list[QuotaAsk]:
    """One ask per capacity and provisioning mode: the teams' nominal quotas of it summed (a
    ClusterQueue admits its nominal quota in every flavor at once), filled up to whole nodes,
    in what the quota counts: GPUs (MIG slices and shared GPUs divided out) or TPU chips. The
    reservation mode asks nothing: the reservation holds its VMs' quota.

    Example:
        >>> from gkeml_sdk import Accelerator, Capacity, ClusterSetup, Team
        >>> setup = ClusterSetup(
        ...     capacity=[Capacity(accelerator=Accelerator("h100", count=8),
        ...                        provisioning=["standard", "spot"])],
        ...     teams=[Team(name="a", quota={"h100": 16}), Team(name="b", quota={"h100": 4})])
        >>> [(a.name, a.preemptible, a.units) for a in setup_quota_asks(setup)]
        [('capacity h100 (standard)', False, 24), ('capacity h100 (spot)', True, 24)]
    """
    asks = []
    for capacity in setup.capacity:
        shape = capacity.accelerator.pool_shape()
        if not shape.request_units:  # no accelerator to count
            continue
        requested = sum(team.quota.get(capacity.name, 0) for team in setup.teams)
        units = math.ceil(requested / shape.request_units) * shape.quota_units
        for mode in capacity.provisioning:
            if mode == "reservation" or not units:
                continue
            asks.append(
                QuotaAsk(
                    f"capacity {capacity.name} ({mode})",
                    capacity.accelerator.price_key,
                    gpu=shape.accelerator_type is not None,
                    preemptible=mode != "standard",
                    units=units,
                )
            )
    return asks
