"""Where a GPU or TPU is offered: the zones of its availability row (`hardware.availability`)
and the provisioning modes the catalog's rules offer it in."""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware import gpus, tpus
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.availability import Availability, availability
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.scheduling.catalog import MODES
from gkeml_sdk.scheduling.rules import check_capacity_mode


@dataclass(frozen=True, slots=True)
class Offering:
    """Where one accelerator is offered: its catalog key, the modes the catalog offers it in,
    and the zones its source lists (`availability`: the zones, the source, the date it was
    read, the continents read in full)."""

    key: str
    modes: tuple[str, ...]
    availability: Availability


def where_offered(name: str) -> Offering:
    """Where the GPU or TPU called `name` (key, alias or label) is offered: zones per the
    availability table (Google's pages for TPUs, SkyPilot's GCP catalog for GPUs) with the
    source and date, and provisioning modes.

    Raises `SpecError` for a name that is neither, with the valid ones.

    Example:
        >>> found = where_offered("trillium")
        >>> found.key, found.availability.zones_in("us-east4"), found.availability.read_on
        ('v6e', ('us-east4-a', 'us-east4-b'), '2026-12-07')
        >>> where_offered("gb200").modes
        ('reservation', 'standard', 'spot')
    """
    try:
        hardware = _hardware_named(name)
    except LookupError as exc:
        raise SpecError(
            f"where {name!r}",
            rule=str(exc),
            fix="a GPU or TPU name as gpu_models() and tpu_generations() list them",
        ) from None
    return Offering(hardware.price_key, _modes(hardware), availability(hardware.price_key))


def _hardware_named(name: str) -> Accelerator | TpuSlice:
    # What each mode is checked against: a GPU's largest machine (the one every mode
    # offers), a TPU's smallest single-host slice.
    try:
        generation = tpus.tpu(name)
    except LookupError:  # not a TPU: a GPU, or the GPU lookup says what is wrong
        row = gpus.gpu(name)
        return Accelerator(row.key, count=row.max_gpus_per_node)
    return TpuSlice(generation.key, generation.single_host[0][0])


def _modes(hardware: Accelerator | TpuSlice) -> tuple[str, ...]:
    found: list[str] = []
    for mode in MODES:
        try:
            if mode == "spot":
                check_capacity_mode(hardware, "standard", spot=True)
            elif mode != "reservation":  # a reservation is offered wherever one is held
                check_capacity_mode(hardware, mode, spot=False)
        except SpecError:
            continue
        found.append(mode)
    return tuple(found)
