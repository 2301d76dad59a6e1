"""A network warning with numbers: a multi-node GPU job beyond the point where plain
networking dominates (8-16 GPUs, GKE's GPU networking guidance) on a machine without
GPUDirect learns which GPUDirect machine would hold the same GPUs and what it costs more or
less per hour, accelerators and VMs together."""

from __future__ import annotations

import math

from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.gpu_row import FAST_SOCKET, GpuModel, MachineType
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.network_stacks import stack
from gkeml_sdk.pricing.catalog import PriceBook
from gkeml_sdk.pricing.cells import quote
from gkeml_sdk.pricing.vm import vm_part

# Beyond one 8-GPU node, data-parallel traffic between nodes over plain (or Fast Socket)
# networking starts to bound step time; by 16 GPUs it dominates (the seed's subtopic 5).
PLAIN_NETWORK_GPUS = 8


def network_advice(
    accelerator: Accelerator, nodes: int, model: str = "on-demand", book: PriceBook | None = None
) -> list[str]:
    """One note for a job of `nodes` pods on `accelerator` that crosses nodes with more than
    8 whole GPUs on a machine without GPUDirect: the cheapest GPUDirect machine whose GPUs
    hold at least as much memory (same CPU architecture), for the same GPU count, and the
    price difference per hour at `model` ('on-demand', 'spot' or 'flex-start').

    Example:
        >>> note, = network_advice(Accelerator("a100-40gb", count=8), nodes=8)
        >>> note.split(";")[0]
        '64 NVIDIA A100 40GB GPUs on 8 a2-highgpu-8g nodes talk over NCCL Fast Socket, not GPUDirect'
        >>> network_advice(Accelerator("h100", count=8), nodes=8)
        []
    """  # noqa: E501
    machine = accelerator.node_machine
    gpus = accelerator.count * nodes
    whole = accelerator.mig is None and accelerator.sharing is None
    if nodes < 2 or not whole or gpus <= PLAIN_NETWORK_GPUS or _gpudirect(machine):
        return []
    book = book or PriceBook.default()
    here = _hourly(book, accelerator.gpu, machine, gpus, model)
    options = [
        (cost, row, option)
        for row, option in _candidates(accelerator.gpu)
        if (cost := _hourly(book, row, option, gpus, model)) is not None
    ]
    over = "plain pod networking" if machine.network is None else stack(machine.network).display
    head = (
        f"{gpus} {accelerator.gpu.display} GPUs on {nodes} {machine.name} nodes talk over "
        f"{over}, not GPUDirect; beyond {PLAIN_NETWORK_GPUS}-16 GPUs that network, not the "
        "GPUs, tends to bound each step"
    )
    if not options or here is None:
        return [f"{head}: no priced GPUDirect machine with as much GPU memory to compare"]
    cost, row, option = min(options, key=lambda found: found[0])
    hosts = math.ceil(gpus / option.gpus)
    delta = cost - here
    return [
        f"{head}. {option.name} ({row.display}, {stack(option.network or '').display}) holds "
        f"the same {gpus} GPUs on {hosts} nodes for ${abs(delta):,.2f}/h "
        f"{'more' if delta >= 0 else 'less'} {model} (${cost:,.2f}/h against ${here:,.2f}/h, "
        "accelerators and VMs; estimate_cost shows how each price was set)"
    ]


def _gpudirect(machine: MachineType) -> bool:
    return machine.network is not None and machine.network != FAST_SOCKET


def _candidates(current: GpuModel) -> list[tuple[GpuModel, MachineType]]:
    return [
        (row, machine)
        for row in GPUS
        if row.memory_gb >= current.memory_gb and row.arch == current.arch
        for machine in row.machine_types
        if _gpudirect(machine) and machine.on_demand
    ]


def _hourly(
    book: PriceBook, row: GpuModel, machine: MachineType, gpus: int, model: str
) -> float | None:
    price = quote(book, row.key, model).value
    vm = vm_part(machine.name).price(model)
    if price is None or vm is None:
        return None
    return price * gpus + vm * math.ceil(gpus / machine.gpus)
