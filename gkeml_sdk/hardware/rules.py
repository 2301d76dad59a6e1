"""GKE's rules for an `Accelerator`'s GPU count, MIG profile and sharing, checked at
construction (`Accelerator` calls them from its validator)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.model import LABEL_VALUE, fail
from gkeml_sdk.hardware import gpu_labels, gpus
from gkeml_sdk.hardware.gpu_labels import MAX_SHARED_CLIENTS, MIN_SHARED_CLIENTS

if TYPE_CHECKING:
    from gkeml_sdk.hardware.gpu_fields import GpuFields


def check_whole_count(acc: GpuFields) -> None:
    """Whole GPUs: a count some machine type carries (and the named one, if any)."""
    row = acc.gpu
    if acc.machine_type is not None:
        offered = row.gpu_counts_on(acc.machine_type)
        if offered and acc.count not in offered:
            raise fail(
                f"{acc.machine_type} carries {_counts(offered)} {row.display} GPUs, "
                f"count={acc.count}",
                rule="GKE attaches a fixed number of GPUs to each machine type (N1: the "
                "counts whose vCPU and memory ceilings the shape stays within)",
                fix=f"count={offered[-1]}, or drop machine_type",
                field="count",
            )
    if acc.count not in row.counts:
        larger = [c for c in row.counts if c > acc.count]
        fix = f"count={larger[0]}" if larger else f"count={row.max_gpus_per_node} with more nodes"
        raise fail(
            f"{acc.count} x {row.display} per node is not offered",
            rule=f"{row.label} machine types carry {_counts(row.counts)} GPUs",
            fix=f"{fix} (valid counts: {_counts(row.counts)})",
            field="count",
        )


def check_mig(acc: GpuFields) -> None:
    """MIG: a profile the GPU and GKE accept, selectable by label, within one node."""
    row = acc.gpu
    if not row.mig_profiles:
        with_mig = [g.key for g in gpus.GPUS if g.mig_profiles]
        raise fail(
            f"{row.display} has no Multi-Instance GPU support",
            rule="MIG exists on A100, H100, H200, B200, GB200 and RTX PRO 6000 only",
            fix="drop mig=, use sharing='time-sharing', or a GPU with MIG: " + ", ".join(with_mig),
            field="mig",
        )
    assert acc.mig is not None
    instances = row.mig_instances(acc.mig)
    if instances is None:
        valid = ", ".join(p for p, _ in row.mig_profiles)
        raise fail(
            f"MIG profile {acc.mig!r} is not accepted for {row.display}",
            rule="GKE's device plugin accepts only its listed partition sizes per GPU model",
            fix=f"mig= one of {valid}",
            field="mig",
        )
    if not LABEL_VALUE.match(acc.mig):
        plain = [p for p, _ in row.mig_profiles if LABEL_VALUE.match(p)]
        raise fail(
            f"MIG profile {acc.mig!r} cannot be selected on GKE",
            rule="pods reach MIG nodes through the node label "
            f"{gpu_labels.PARTITION_LABEL}, and a label value cannot contain '+'",
            fix=f"mig= one of {', '.join(plain)}",
            field="mig",
        )
    allocatable = instances * acc.node_machine.gpus
    if acc.count > allocatable:
        raise fail(
            f"count={acc.count} MIG slices of {acc.mig} exceed one node's {allocatable}",
            rule=f"a {acc.node_machine.name} node has {acc.node_machine.gpus} GPU(s) x "
            f"{instances} {acc.mig} instances",
            fix=f"count<={allocatable}, or a larger machine_type",
            field="count",
        )


def check_sharing(acc: GpuFields) -> None:
    """Shared GPUs: a strategy, a client count in range, and shares per container allowed."""
    if acc.sharing is None:
        raise fail(
            "clients_per_gpu is set without a sharing strategy",
            rule="max-shared-clients-per-gpu only applies to time-sharing or MPS node pools",
            fix="sharing='time-sharing' or sharing='mps'",
            field="sharing",
        )
    clients = acc.clients_per_gpu
    if clients is None or not MIN_SHARED_CLIENTS <= clients <= MAX_SHARED_CLIENTS:
        raise fail(
            f"clients_per_gpu={clients} for {acc.sharing}",
            rule=f"GKE shares a GPU among {MIN_SHARED_CLIENTS}-{MAX_SHARED_CLIENTS} clients",
            fix="clients_per_gpu=4 (any value from 2 to 48)",
            field="clients_per_gpu",
        )
    if acc.count == 1:
        return
    node_gpus = acc.node_machine.gpus
    if acc.sharing == "time-sharing":
        raise fail(
            f"count={acc.count} shared GPUs in one container",
            rule="a time-shared GPU container may request at most 1 nvidia.com/gpu",
            fix="count=1, or whole GPUs (drop sharing=)",
            field="count",
        )
    if node_gpus != 1 or acc.count > clients:
        raise fail(
            f"count={acc.count} MPS shares in one container on a {node_gpus}-GPU node",
            rule="MPS allows more than 1 nvidia.com/gpu per container only on nodes with "
            f"exactly 1 GPU, up to clients_per_gpu ({clients})",
            fix=f"count=1, or count<={clients} on a 1-GPU machine type",
            field="count",
        )


def _counts(counts: tuple[int, ...]) -> str:
    return "/".join(str(c) for c in counts)


def check_on_demand(acc: GpuFields, *, spot: bool) -> None:
    """Refuse on-demand capacity on a machine type sold only as Spot or flex-start.

    Example:
        >>> from gkeml_sdk import Accelerator
        >>> check_on_demand(Accelerator("h100", count=1), spot=False)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: a3-highgpu-1g is not sold on-demand ...
    """
    if spot or acc.on_demand_offered:
        return
    machine = acc.node_machine
    on_demand = [m for m in acc.gpu.machine_types if m.on_demand]
    larger = f", or count={on_demand[0].gpus} ({on_demand[0].name})" if on_demand else ""
    raise fail(
        f"{machine.name} is not sold on-demand",
        rule=f"Compute Engine offers {machine.name} only as Spot or flex-start capacity",
        fix=f"spot=True{larger}",
        field="spot",
    )
