"""What a training job asks of the project's Compute Engine quotas at once
(`hardware.quota_needs`): one ask per provisioning mode it accepts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gkeml_sdk.hardware.quota_needs import QuotaAsk
from gkeml_sdk.scheduling.capacity_order import accepted_modes

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


def job_quota_asks(job: TrainingJobFields) -> list[QuotaAsk]:
    """One ask per mode `job` accepts (`accepted_modes`, in its order): the GPUs of every
    machine its pods fill (MIG slices and shared GPUs still take a whole machine's GPUs from
    the quota), or the TPU chips of every slice. [] for a job without accelerators, and for
    one that may run on a reservation, whose VMs' quota Compute Engine took when the
    reservation was made.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> job = TrainingJob(name="ft", command=["x"], accelerator=Accelerator("h100", count=8),
        ...                   nodes=2, capacity=["standard", "spot"])
        >>> [(a.name, a.preemptible, a.units) for a in job_quota_asks(job)]
        [("job 'ft' (standard)", False, 16), ("job 'ft' (spot)", True, 16)]
    """
    hardware = job.accelerator
    if hardware is None:
        return []
    shape = hardware.pool_shape()
    modes = accepted_modes(job)
    if not shape.quota_units or "reservation" in modes:
        return []
    billing = hardware.billing(job.nodes)
    gpu = shape.accelerator_type is not None
    # GPUs come with whole machines; a TPU job holds every chip of its slices.
    units = math.ceil(billing.machines) * shape.quota_units if gpu else math.ceil(billing.units)
    return [
        QuotaAsk(f"job {job.name!r} ({mode})", billing.key, gpu, mode != "standard", units)
        for mode in modes
    ]
