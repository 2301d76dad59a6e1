"""What a pod needs to land on its hardware's nodes, Spot or not: node selector, tolerations and
node affinity, read from the hardware row. Training and serving pods share it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.scheduling import spot

if TYPE_CHECKING:
    from gkeml_sdk.hardware.protocol import Hardware


def accelerator_scheduling(
    hardware: Hardware, *, on_spot: bool
) -> tuple[dict[str, str], list[Obj], Obj]:
    """Node selector, tolerations and node affinity for pods on `hardware` (and Spot).

    Example:
        >>> from gkeml_sdk import Accelerator
        >>> selector, tolerations, _ = accelerator_scheduling(Accelerator("l4"), on_spot=True)
        >>> selector["cloud.google.com/gke-spot"], [t["key"] for t in tolerations]
        ('true', ['nvidia.com/gpu', 'cloud.google.com/gke-spot'])
    """
    selector = hardware.node_selector()
    tolerations = hardware.tolerations()
    if on_spot:
        selector[spot.SPOT_LABEL] = "true"
        tolerations.append(
            {
                "key": spot.SPOT_TAINT_KEY,
                "operator": "Equal",
                "value": "true",
                "effect": "NoSchedule",
            }
        )
    expressions = hardware.node_affinity()
    affinity: Obj = {}
    if expressions:
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions}]
            }
        }
    return selector, tolerations, affinity
