"""The rules of asking GKE for capacity a given way (standard, Spot, flex-start, queued
provisioning; https://cloud.google.com/kubernetes-engine/docs/concepts/dws), shared by a
`TrainingJob` and the node pool it lands on, so both refuse the same combinations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware import gpus, tpus
from gkeml_sdk.hardware.machines import MACHINES
from gkeml_sdk.hardware.pool_shape import PoolHardware
from gkeml_sdk.scheduling.catalog import DWS_MAX_RUN_SECONDS, Mode, mode

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


def spot_spelling(data: Any) -> Any:
    """`provisioning="spot"` is another spelling of `spot=True`: keep one form (`spot=True`,
    `provisioning="standard"`) so that both spellings compile and compare the same.

    Example:
        >>> spot_spelling({"provisioning": "spot"})
        {'provisioning': 'standard', 'spot': True}
    """
    if isinstance(data, dict) and data.get("provisioning") == "spot":
        return {**data, "provisioning": "standard", "spot": True}
    return data


def capacity_mode(spot: bool, provisioning: Mode) -> Mode:
    """The provisioning mode nodes come from: the catalog row of `spot` or `provisioning`.

    Example:
        >>> capacity_mode(True, "standard"), capacity_mode(False, "queued")
        ('spot', 'queued')
    """
    return "spot" if spot and provisioning == "standard" else provisioning


def check_capacity_mode(
    hardware: PoolHardware | None, provisioning: Mode, *, spot: bool, field: str = "provisioning"
) -> None:
    """Raise `SpecError` when `hardware` cannot be had as `provisioning` (with `spot`): what a
    job asks for and what a node pool is created as follow the same rules.

    Example:
        >>> from gkeml_sdk import Accelerator
        >>> check_capacity_mode(Accelerator("l4"), "queued", spot=True)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: spot=True with provisioning='queued' ...
    """
    row = mode(provisioning)
    if not row.dws:
        if hardware is not None:
            hardware.check_provisioning(spot=spot or provisioning == "spot")
        return
    if hardware is None:
        raise fail(
            f"provisioning={provisioning!r} without an accelerator",
            rule="Dynamic Workload Scheduler provisions GPU and TPU nodes",
            fix="accelerator=Accelerator(...) or TpuSlice(...), or provisioning='standard'",
            field=field,
        )
    if spot:
        raise fail(
            f"spot=True with provisioning={provisioning!r}",
            rule="a node is a Spot VM or comes from Dynamic Workload Scheduler (flex-start, "
            "queued provisioning), never both",
            fix=f"drop spot=True (spot=False) to keep provisioning={provisioning!r}, or "
            "provisioning='standard' with spot=True",
            field="spot",
        )
    shape = hardware.pool_shape()
    if not shape.flex_start:
        raise fail(
            f"provisioning={provisioning!r} with {shape.display}",
            rule=f"Dynamic Workload Scheduler (flex-start, queued provisioning) does not offer "
            f"{shape.display}; it offers {_flex_start_hardware()}",
            fix="provisioning='standard' (spot=True for cheaper capacity), or one of those",
            field=field,
        )
    if not row.atomic and shape.fixed_nodes:
        raise fail(
            f"provisioning={provisioning!r} with multi-host {shape.display}",
            rule="flex-start alone creates nodes one at a time; a multi-host slice must come "
            "whole, which queued provisioning does",
            fix="provisioning='queued' (flex-start with queued provisioning)",
            field=field,
        )


def check_run_limit(seconds: int | None, provisioning: Mode, *, field: str, most: str) -> None:
    """Raise `SpecError` when a run limit of `seconds` exceeds what flex-start VMs allow.

    Example:
        >>> check_run_limit(8 * 86400, "flex-start", field="max_runtime", most="'7d'")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: max_runtime=691200 s with provisioning='flex-start' ...
    """
    if seconds is None or not mode(provisioning).dws or 0 < seconds <= DWS_MAX_RUN_SECONDS:
        return
    raise fail(
        f"{field}={seconds} s with provisioning={provisioning!r}",
        rule=f"flex-start VMs run at most 7 days ({DWS_MAX_RUN_SECONDS} s), and a "
        "ProvisioningRequest's maxRunDurationSeconds may not exceed that",
        fix=f"{field}={most} or less (checkpoint and resubmit for longer training), or "
        "provisioning='standard'",
        field=field,
    )


def check_provisioning_mode(job: TrainingJobFields) -> None:
    """Raise `SpecError` when `job.provisioning` cannot be combined with the rest of the job.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4"), spot=True,
        ...             provisioning="queued")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: spot=True with provisioning='queued' ...
    """
    check_capacity_mode(job.accelerator, job.provisioning, spot=job.spot)
    check_run_limit(job.max_runtime, job.provisioning, field="max_runtime", most="'7d'")
    if mode(job.provisioning).atomic:
        _check_one_pod_set(job)


def _check_one_pod_set(job: TrainingJobFields) -> None:
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


def _flex_start_hardware() -> str:
    keys = [g.key for g in gpus.GPUS if g.flex_start] + [t.key for t in tpus.TPUS if t.flex_start]
    keys += [m.name for m in MACHINES if m.flex_start]
    return f"{', '.join(keys[:-1])} and {keys[-1]}"
