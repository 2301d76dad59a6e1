"""Which inter-node networking stack a job's pods get: `network="auto" | "standard" |
"gpudirect"` resolved against the machine type's catalog row, refusing what GKE cannot do."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware import gpus
from gkeml_sdk.hardware import network_stacks as catalog
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.cpu_machine import CpuMachine
from gkeml_sdk.hardware.gpu_row import MachineType
from gkeml_sdk.hardware.network_row import NetworkStack
from gkeml_sdk.hardware.tpu_slice import TpuSlice

NetworkMode = Literal["auto", "standard", "gpudirect"]


@dataclass(frozen=True, slots=True)
class NetworkChoice:
    """The stack the pods get (None: plain pod networking) and why, for the compile notes.

    Example:
        >>> choose_network(Accelerator("h100-mega", count=8), 2, "auto").stack.display
        'GPUDirect-TCPXO'
    """

    stack: NetworkStack | None
    machine: str | None = None
    reason: str | None = None


# Specs are frozen and compiling asks several times per spec (pods, claims, notes): the
# answer for the same accelerator, nodes and mode is looked up once.
@functools.lru_cache(maxsize=1024)
def choose_network(
    accelerator: Accelerator | TpuSlice | CpuMachine | None,
    nodes: int,
    mode: NetworkMode,
    gpus_per_pod: int | None = None,
) -> NetworkChoice:
    """The networking of pods on `accelerator` across `nodes` nodes. `auto` takes the
    machine's stack for multi-node jobs (inside one node GPUs talk over NVLink or PCIe, so a
    single-node job gains nothing) when the pod uses the whole machine; `gpudirect` insists
    and raises `SpecError` where GKE has no GPUDirect for the shape. `gpus_per_pod`: GPUs
    each pod holds when it differs from `accelerator.count` (a model server's replica).

    Example:
        >>> choose_network(Accelerator("h100", count=8), 1, "auto").stack is None
        True
        >>> choose_network(Accelerator("l4"), 2, "auto").stack.display
        'NCCL Fast Socket'
    """
    if mode == "standard":
        return NetworkChoice(None)
    if not isinstance(accelerator, Accelerator):
        if mode == "gpudirect":
            _refuse_without_gpus(accelerator)
        return NetworkChoice(None)
    row, machine = accelerator.gpu, accelerator.node_machine
    gpus = gpus_per_pod or accelerator.count
    if accelerator.machine_type is None and accelerator.count == 1 and gpus in row.counts:
        machine = row.machine_for(gpus)
    key = machine.network
    found = catalog.stack(key) if key else None
    whole = accelerator.mig is None and accelerator.sharing is None and gpus == machine.gpus
    if mode == "gpudirect":
        _check_gpudirect(accelerator, machine, found, whole)
        return NetworkChoice(found, machine.name)
    if nodes < 2 or found is None:
        return NetworkChoice(None)
    if found.gpudirect and not whole:
        return NetworkChoice(
            None,
            machine.name,
            f"network='auto' chose standard pod networking: {found.display} on {machine.name} "
            f"needs each pod to hold all {machine.gpus} GPUs of the node, not part of them, "
            "MIG slices or shared GPUs",
        )
    return NetworkChoice(found, machine.name)


def _refuse_without_gpus(accelerator: TpuSlice | CpuMachine | None) -> None:
    what = "TPU slices" if isinstance(accelerator, TpuSlice) else "CPU-only jobs"
    raise fail(
        f"network='gpudirect' with {accelerator or 'no accelerator'}",
        rule=f"GPUDirect moves GPU memory between A3/A4 nodes; {what} have no GPUs (TPU "
        "slices talk over ICI inside a slice and the data-center network between slices)",
        fix="network='auto' (or 'standard')",
        field="network",
    )


def _check_gpudirect(
    accelerator: Accelerator, machine: MachineType, found: NetworkStack | None, whole: bool
) -> None:
    row = accelerator.gpu
    capable = [m for m in row.machine_types if m.network and catalog.stack(m.network).gpudirect]
    if found is None or not found.gpudirect:
        if capable:
            best = capable[0]
            fix = f"Accelerator({row.key!r}, count={best.gpus}) ({best.name})"
            rule = (
                f"GKE offers {catalog.stack(best.network or '').display} only on "
                f"{best.name}, with all {best.gpus} GPUs of the machine"
            )
        else:
            fix = (
                f"network='auto' ({found.display} on {machine.name})"
                if found is not None
                else "network='standard'"
            ) + ", or an A3/A4 GPU such as Accelerator('h100-mega', count=8)"
            rule = f"GKE's GPUDirect stacks run on {_gpudirect_machines()}"
        raise fail(
            f"network='gpudirect' on {machine.name}, which has no GPUDirect networking",
            rule=rule,
            fix=fix,
            field="network",
        )
    if not whole:
        raise fail(
            f"network='gpudirect' with {accelerator}",
            rule=f"{found.display} on {machine.name} needs the pod to hold all "
            f"{machine.gpus} GPUs of the node, not part of them, MIG slices or shared GPUs",
            fix=f"Accelerator({row.key!r}, count={machine.gpus}), or network='auto'",
            field="network",
        )


def _gpudirect_machines() -> str:
    by_stack: dict[str, list[str]] = {}
    for row in gpus.GPUS:
        for m in row.machine_types:
            if m.network and catalog.stack(m.network).gpudirect:
                names = by_stack.setdefault(catalog.stack(m.network).display, [])
                names += [] if m.name in names else [m.name]
    return "; ".join(f"{', '.join(names)} ({display})" for display, names in by_stack.items())
