"""What a job's provisioning mode adds to its manifests: the node selector and tolerations of
flex-start or queued-provisioning nodes, and the ProvisioningRequest parameters Kueue reads
from the job (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.scheduling.catalog import (
    MAX_RUN_DURATION_PARAMETER,
    PROVREQ_ANNOTATION_PREFIX,
    mode,
)

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


def add_provisioning_scheduling(
    job: TrainingJobFields, selector: dict[str, str], tolerations: list[Obj]
) -> None:
    """Select and tolerate the nodes of `job.provisioning` (Spot is handled with the hardware).

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> selector, tolerations = {}, []
        >>> add_provisioning_scheduling(TrainingJob(name="a", command=["x"],
        ...     accelerator=Accelerator("l4"), provisioning="queued"), selector, tolerations)
        >>> selector, [t["key"] for t in tolerations]
        ({'cloud.google.com/gke-queued': 'true'}, ['cloud.google.com/gke-queued'])
    """
    from gkeml_sdk.scheduling.capacity_order import pinned_reservation_labels

    selector.update(pinned_reservation_labels(job))
    row = mode(job.provisioning)
    if not row.dws:
        return
    selector.update(row.node_labels())
    tolerations.extend(row.tolerations())


def provisioning_annotations(job: TrainingJobFields) -> dict[str, str]:
    """Job annotations Kueue copies into the ProvisioningRequest's parameters: the run's
    `maxRunDurationSeconds` when the job has a `max_runtime` (GKE defaults it to 7 days).

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> provisioning_annotations(TrainingJob(name="a", command=["x"], max_runtime="2h",
        ...     accelerator=Accelerator("l4"), provisioning="queued"))
        {'provreq.kueue.x-k8s.io/maxRunDurationSeconds': '7200'}
    """
    modes = job.capacity or (job.provisioning,)
    if job.max_runtime is None or all(mode(m).provisioning_class is None for m in modes):
        return {}
    return {PROVREQ_ANNOTATION_PREFIX + MAX_RUN_DURATION_PARAMETER: str(job.max_runtime)}


def provisioning_notes(job: TrainingJobFields) -> list[str]:
    """Advice about the provisioning mode that is no error."""
    row = mode(job.provisioning)
    notes = []
    if row.dws and not row.atomic and job.gang and job.nodes > 1:
        notes.append(
            f"provisioning='flex-start' obtains the {job.nodes} nodes one at a time, and the "
            "gang waits until the last one arrives; provisioning='queued' obtains them all "
            "at once through a ProvisioningRequest"
        )
    if row.provisioning_class is not None:
        notes.append(
            f"provisioning={job.provisioning!r} needs queue={job.queue!r} to be a LocalQueue "
            "whose ClusterQueue has a ProvisioningRequest admission check of class "
            f"{row.provisioning_class} (see ClusterSetup and `gkeml setup`)"
        )
    return notes
