"""Where a pod lands: on its hardware's nodes, Spot or not (node selector, tolerations and node
affinity, read from the hardware row), and near its peers (Kueue Topology-Aware Scheduling
annotations, https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.scheduling import spot
from gkeml_sdk.scheduling.placement import Placement, resolved
from gkeml_sdk.scheduling.topology import PREFERRED_ANNOTATION, REQUIRED_ANNOTATION, level_label

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


def topology_annotations(placement: Placement | None) -> dict[str, str]:
    """The pod-template annotation asking Kueue for a placement's topology level, if any.

    Example:
        >>> topology_annotations("compact")
        {'kueue.x-k8s.io/podset-preferred-topology': 'cloud.google.com/gce-topology-host'}
        >>> topology_annotations(None)
        {}
    """
    wanted = resolved(placement)
    if wanted is None:
        return {}
    key = REQUIRED_ANNOTATION if wanted.mode == "required" else PREFERRED_ANNOTATION
    return {key: level_label(wanted.level)}
