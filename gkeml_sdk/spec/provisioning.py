"""The rules of asking GKE for capacity through Dynamic Workload Scheduler: flex-start and
queued provisioning (https://cloud.google.com/kubernetes-engine/docs/concepts/dws), checked
when a `TrainingJob` is built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.catalog.provisioning import DWS_MAX_RUN_SECONDS, mode
from gkeml_sdk.spec.base import fail
from gkeml_sdk.spec.tpu import TpuSlice

if TYPE_CHECKING:
    from gkeml_sdk.spec.job import TrainingJob


def check_provisioning_mode(job: TrainingJob) -> None:
    """Raise `SpecError` when `job.provisioning` cannot be combined with the rest of the job.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4"), spot=True,
        ...             provisioning="queued")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: spot=True with provisioning='queued' ...
    """
    row = mode(job.provisioning)
    if not row.dws:
        return
    if job.accelerator is None:
        raise fail(
            f"provisioning={job.provisioning!r} without an accelerator",
            rule="Dynamic Workload Scheduler provisions GPU and TPU nodes",
            fix="accelerator=Accelerator(...) or TpuSlice(...), or provisioning='standard'",
            field="provisioning",
        )
    if job.spot:
        raise fail(
            f"spot=True with provisioning={job.provisioning!r}",
            rule="a node is Spot or comes from Dynamic Workload Scheduler (flex-start, queued "
            "provisioning), never both",
            fix=f"drop spot=True to keep provisioning={job.provisioning!r}, or "
            "provisioning='standard' with spot=True",
            field="provisioning",
        )
    if job.max_runtime is not None and job.max_runtime > DWS_MAX_RUN_SECONDS:
        raise fail(
            f"max_runtime={job.max_runtime} s with provisioning={job.provisioning!r}",
            rule=f"flex-start VMs run at most 7 days ({DWS_MAX_RUN_SECONDS} s), and a "
            "ProvisioningRequest's maxRunDurationSeconds may not exceed that",
            fix="max_runtime='7d' or less (checkpoint and resubmit for longer training), or "
            "provisioning='standard'",
            field="max_runtime",
        )
    tpu = job.accelerator if isinstance(job.accelerator, TpuSlice) else None
    if tpu is not None and not tpu.tpu.flex_start:
        raise fail(
            f"provisioning={job.provisioning!r} with {tpu}",
            rule=f"Dynamic Workload Scheduler does not offer {tpu.tpu.display}; it offers "
            "TPU v5e, v5p and v6e",
            fix="provisioning='standard', or a TpuSlice of v5e, v5p or v6e",
            field="provisioning",
        )
    if row.atomic:
        _check_one_pod_set(job)
    elif tpu is not None and tpu.multi_host:
        raise fail(
            f"provisioning='flex-start' with multi-host {tpu}",
            rule="flex-start alone creates single-host TPU nodes one at a time; a multi-host "
            "slice must come whole, which queued provisioning does",
            fix="provisioning='queued'",
            field="provisioning",
        )


def _check_one_pod_set(job: TrainingJob) -> None:
    # GKE's queued provisioning takes one PodSet per ProvisioningRequest and provisions it from
    # one node pool in one zone; a multislice job is one node pool per slice.
    slices = job.hardware.slices
    if slices > 1:
        raise fail(
            f"provisioning='queued' with {slices} TPU slices",
            rule="GKE's queued provisioning supports one PodSet per ProvisioningRequest, "
            "obtained from a single node pool, and each TPU slice is its own node pool",
            fix="slices=1 (one job per slice), or provisioning='standard' for multislice",
            field="provisioning",
        )
