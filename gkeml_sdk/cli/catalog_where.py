"""`gkeml catalog where ACCEL`: the zones Google's pages list for an accelerator, and the
provisioning modes the catalog offers it in."""

from __future__ import annotations

from gkeml_sdk.errors import GkemlError, SpecError
from gkeml_sdk.hardware import gpus, tpus
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.availability import availability, region_of, section_of
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.scheduling.catalog import MODES
from gkeml_sdk.scheduling.rules import check_capacity_mode


def hardware_named(name: str) -> Accelerator | TpuSlice:
    """A node of the GPU or TPU called `name` (key, alias or label), what each mode is
    checked against: a GPU's largest machine (the one every mode offers), a TPU's smallest
    single-host slice.

    Example:
        >>> hardware_named("trillium")
        TpuSlice('v6e', '1x1')
    """
    try:
        generation = tpus.tpu(name)
    except LookupError:  # not a TPU: a GPU, or the GPU lookup says what is wrong
        row = gpus.gpu(name)
    else:
        return TpuSlice(generation.key, generation.single_host[0][0])
    return Accelerator(row.key, count=row.max_gpus_per_node)


def offered_modes(hardware: Accelerator | TpuSlice) -> list[str]:
    """The capacity modes the catalog's rules let pools of `hardware` use (a reservation
    wherever one is held).

    Example:
        >>> offered_modes(Accelerator("gb200", count=4))
        ['reservation', 'standard', 'spot']
    """
    found = []
    for mode in MODES:
        try:
            if mode == "spot":
                check_capacity_mode(hardware, "standard", spot=True)
            elif mode != "reservation":
                check_capacity_mode(hardware, mode, spot=False)
        except SpecError:
            continue
        found.append(mode)
    return found


def where_report(name: str) -> tuple[str, list[list[str]], list[str]]:
    """What `gkeml catalog where NAME` prints: a heading with the modes, a table of zones
    (header first; empty when none is recorded), and lines saying why, the source and the
    date it was read.

    Example:
        >>> heading, rows, lines = where_report("v5p")
        >>> heading, rows[1]  # doctest: +ELLIPSIS
        ('v5p: modes offered: ...', ['us-central1-a', 'us-central1', 'North America'])
    """
    try:
        hardware = hardware_named(name)
    except (GkemlError, LookupError) as exc:
        raise SpecError(
            f"catalog where {name!r}",
            rule=str(exc),
            fix="a GPU or TPU name as `gkeml catalog gpus|tpus` lists it",
        ) from None
    row = availability(hardware.price_key)
    heading = f"{hardware.price_key}: modes offered: {', '.join(offered_modes(hardware))}"
    rows = [[zone, region_of(zone), section_of(zone)] for zone in row.zones]
    lines = []
    if rows:
        lines += [
            "Google's page lists zones, not modes per zone: the modes above are the catalog's, "
            "in every listed zone",
            f"sections read in full: {', '.join(row.sections)}; zones elsewhere are unknown here",
        ]
    else:
        lines.append("zones: none recorded")
    if row.note:
        lines.append(f"note: {row.note}")
    lines.append(f"source: {row.source}, read {row.read_on}")
    return heading, [["zone", "region", "section"], *rows] if rows else [], lines
