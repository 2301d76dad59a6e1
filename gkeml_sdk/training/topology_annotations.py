"""Kueue Topology-Aware Scheduling annotations of a job's pod template
(https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.scheduling.placement import resolved
from gkeml_sdk.scheduling.topology import PREFERRED_ANNOTATION, REQUIRED_ANNOTATION, level_label

if TYPE_CHECKING:
    from gkeml_sdk.training.model import TrainingJob


def topology_annotations(job: TrainingJob) -> dict[str, str]:
    """The pod-template annotation asking Kueue for the job's topology level, if any.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> topology_annotations(TrainingJob(name="a", command=["x"], placement="compact"))
        {'kueue.x-k8s.io/podset-preferred-topology': 'cloud.google.com/gce-topology-host'}
    """
    placement = resolved(job.placement)
    if placement is None:
        return {}
    key = REQUIRED_ANNOTATION if placement.mode == "required" else PREFERRED_ANNOTATION
    return {key: level_label(placement.level)}
