"""A job that accepts several capacity modes (`TrainingJob(capacity=[...])`) and one that
consumes a named reservation (`TrainingJob(reservation=...)`): how either is spelled once, which
modes each must meet the rules of, and the node selector a reservation pins
(https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/#flavorfungibility,
https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from gkeml_sdk.core.model import fail
from gkeml_sdk.scheduling.catalog import CapacityMode, Mode, mode
from gkeml_sdk.scheduling.reservation import Reservation, reservation_of
from gkeml_sdk.scheduling.rules import check_capacity_mode, check_run_limit

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


def capacity_spelling(data: Any) -> Any:
    """One spelling per meaning: a capacity order of one mode pins that mode
    (`["spot"]` is `spot=True`), and a reservation named next to an order is tried first.

    Example:
        >>> capacity_spelling({"capacity": ["flex-start"]})
        {'capacity': (), 'provisioning': 'flex-start'}
        >>> capacity_spelling({"capacity": ["spot"], "reservation": "r1"})["capacity"]
        ('reservation', 'spot')
    """
    if not isinstance(data, dict) or not data.get("capacity"):
        return data
    order = tuple(data["capacity"])
    if data.get("reservation") and "reservation" not in order:
        order = ("reservation", *order)
    if len(order) != 1:
        return {**data, "capacity": order}
    (only,) = order
    if only == "spot":
        return {**data, "capacity": (), "spot": True}
    if only in ("flex-start", "queued"):
        return {**data, "capacity": (), "provisioning": only}
    return {**data, "capacity": ()}  # "standard", or "reservation" with its name


def job_reservation(job: TrainingJobFields) -> Reservation | None:
    """The reservation `job` names, parsed (None when it names none)."""
    if job.reservation is None:
        return None
    return reservation_of(job.reservation, job.reservation_project)


def pinned_reservation_labels(job: TrainingJobFields) -> dict[str, str]:
    """The node selector of a job pinned to its reservation (none when it has a capacity
    order: the ordered queue's reservation flavor adds it at admission).

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> job = TrainingJob(name="a", command=["x"], accelerator=Accelerator("h100", count=8),
        ...                   reservation="h100-res")
        >>> pinned_reservation_labels(job)["cloud.google.com/reservation-name"]
        'h100-res'
    """
    reservation = job_reservation(job)
    if reservation is None or job.capacity:
        return {}
    return reservation.node_labels()


def accepted_modes(job: TrainingJobFields) -> tuple[CapacityMode, ...]:
    """Every mode `job` may run in, in its preference order.

    Example:
        >>> from gkeml_sdk import Accelerator, TrainingJob
        >>> accepted_modes(TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4"),
        ...                            capacity=["standard", "spot"]))
        ('standard', 'spot')
    """
    if job.capacity:
        return job.capacity
    if job.reservation is not None:
        return ("reservation",)
    return ("spot",) if job.spot else (job.provisioning,)


def check_capacity_order(job: TrainingJobFields) -> None:
    """Raise `SpecError` when the capacity order or reservation cannot hold `job`; each mode
    of the order must meet the rules of a job pinned to it."""
    job_reservation(job)  # a name Compute Engine refuses raises here
    order = job.capacity
    if order and (job.spot or job.provisioning != "standard"):
        raise fail(
            f"capacity={list(order)} with spot={job.spot}, provisioning={job.provisioning!r}",
            rule="a capacity order replaces spot= and provisioning=: Kueue picks the mode",
            fix=f"capacity={list(order)} alone, or spot=/provisioning= without capacity",
            field="capacity",
        )
    if len(set(order)) != len(order):
        raise fail(
            f"capacity={list(order)} repeats a mode",
            rule="each mode appears once, in the order Kueue should try it",
            fix=f"capacity={list(dict.fromkeys(order))}",
            field="capacity",
        )
    if job.reservation is not None and (job.spot or mode(job.provisioning).dws):
        raise fail(
            f"reservation={job.reservation!r} with "
            + ("spot=True" if job.spot else f"provisioning={job.provisioning!r}"),
            rule="a reservation holds on-demand VMs; Spot and flex-start VMs never consume "
            "reservations",
            fix=f"capacity=['reservation', {'spot' if job.spot else job.provisioning!r}] to "
            "fall back to it when the reservation is full, or drop reservation=",
            field="reservation",
        )
    for each in order:
        # Reserved and Spot VMs are standard VMs to the DWS rules; DWS modes are themselves.
        pinned = "standard" if each in ("reservation", "spot") else cast(Mode, each)
        check_capacity_mode(job.accelerator, pinned, spot=each == "spot", field="capacity")
        check_run_limit(job.max_runtime, pinned, field="max_runtime", most="'7d'")
    if any(mode(m).atomic for m in order) and job.hardware.slices > 1:
        raise fail(
            f"capacity={list(order)} with {job.hardware.slices} TPU slices",
            rule="GKE's queued provisioning takes one PodSet per ProvisioningRequest",
            fix="drop 'queued' from capacity, or slices=1",
            field="capacity",
        )
