"""The VM part of a price: what Compute Engine bills for a machine's vCPUs, memory and bundled
Local SSD on top of its accelerators, per hour and provisioning model.

Rates per vCPU-hour and GiB-hour are solved from whole-machine rows of the SkyPilot GCP
catalog (catalogs/v8/gcp/vms.csv at commit 8427bbf, us-central1, read 2026-12-07): two rows
of one family with different memory per vCPU give both rates; a family whose machines all
share one ratio is priced per vCPU with its memory. Families no row was found for are
estimated from a named family's rates, and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.hardware.machines import MachineShape, machine_shape

VM_SOURCE = (
    "SkyPilot GCP catalog (github.com/skypilot-org/skypilot-catalog, catalogs/v8/gcp/vms.csv "
    "at 8427bbf), us-central1 whole-machine rows"
)
VM_AS_OF = "2026-12-07"
# Local SSD: about $0.080 per GiB-month, $0.064 on preemptible (Spot) VMs, as Google's
# disk pricing page was reported (smartbiz.be, "Google keldert prijzen voor SSD-cloudopslag");
# the page itself is JavaScript-rendered. 730 hours a month, as Google bills. The on-demand
# rate closes the Cloud Billing Catalog's whole a3-highgpu-8g price to the cent (test_vm.py).
SSD_SOURCE = "Local SSD $0.080 (Spot $0.064) per GiB-month, Google disk pricing as reported"
HOURS_PER_MONTH = 730
SSD_GIB_HOUR = {"on-demand": 0.080 / HOURS_PER_MONTH, "spot": 0.064 / HOURS_PER_MONTH}
# Flex-start takes "up to 53 %" off vCPUs, memory and accelerators (GKE "About flex-start
# provisioning"); the bound is the lowest a flex-start price can be.
FLEX_START_DISCOUNT = 0.53

# (machine type, vCPUs, GiB, on-demand $/h, Spot $/h): us-central1 rows of the catalog read.
ANCHORS: dict[str, tuple[tuple[str, int, float, float, float], ...]] = {
    "n1": (
        ("n1-standard-8", 8, 30.0, 0.38, 0.11605),
        ("n1-highmem-4", 4, 26.0, 0.23661, 0.07183),
    ),
    "a2": (
        ("a2-highgpu-1g", 12, 85.0, 0.73948, 0.36975),
        ("a2-ultragpu-1g", 12, 170.0, 1.09962, 0.54978),
    ),
    # A3 High, Mega and Ultra solved together: both rows are reproduced exactly.
    "a3": (
        ("a3-highgpu-8g", 208, 1872.0, 9.46006, 2.75246),
        ("a3-ultragpu-8g", 224, 2952.0, 12.266, 3.56978),
    ),
    "g2": (("g2-standard-12", 12, 48.0, 0.44038, 0.17621),),
}
# Families with no priced row in the catalog read (A4's rows carry 0.0), and the family whose
# vCPU and GiB rates stand in for theirs: the nearest series with both rates solved.
STAND_INS = {"a4": "a3", "a4x": "a3", "h4d": "n1", "c3": "n1", "c4": "n1"}


@dataclass(frozen=True, slots=True)
class Rates:
    """$ per vCPU-hour and per GiB-hour of one family and provisioning model; `gib` is 0 when
    the family prices a vCPU with its memory (`per_vcpu_gib` GiB of it)."""

    vcpu: float
    gib: float
    per_vcpu_gib: float = 0.0


@dataclass(frozen=True, slots=True)
class VmPart:
    """What one machine's vCPUs, memory and Local SSD cost per hour, per provisioning model
    (`flex_start`: on-demand less the documented 53 % bound, always an estimate); `estimate`
    says how the figures were derived ("" for rates solved from the catalog's rows), `missing`
    why there is no figure.

    Example:
        >>> part = vm_part("a2-highgpu-1g")
        >>> round(part.price("on-demand"), 5), part.estimate
        (0.73948, '')
    """

    machine_type: str
    on_demand: float | None
    spot: float | None
    flex_start: float | None
    estimate: str = ""
    missing: str = ""

    def price(self, model: str) -> float | None:
        """Per-hour price for 'on-demand', 'spot' or 'flex-start'."""
        return {"on-demand": self.on_demand, "spot": self.spot, "flex-start": self.flex_start}[
            model
        ]


def family_rates(family: str, model: str) -> Rates:
    """The rates of `family` for 'on-demand' or 'spot', solved from its anchor rows.

    Example:
        >>> r = family_rates("n1", "on-demand")
        >>> round(r.vcpu, 6), round(r.gib, 6)
        (0.03161, 0.004237)
    """
    rows = [
        (v, gib, od if model == "on-demand" else spot) for _, v, gib, od, spot in ANCHORS[family]
    ]
    (v1, m1, price1), *rest = rows
    if not rest:
        return Rates(price1 / v1, 0.0, m1 / v1)
    (v2, m2, price2), *_ = rest
    # Two equations, vcpus * vcpu_rate + gib * gib_rate = price, with different GiB per vCPU.
    gib = (price2 * v1 - price1 * v2) / (m2 * v1 - m1 * v2)
    return Rates((price1 - m1 * gib) / v1, gib)


def vm_part(machine_type: str) -> VmPart:
    """The VM part of `machine_type` per hour, by provisioning model.

    Example:
        >>> round(vm_part("n1-standard-64").price("spot"), 4)
        0.9284
        >>> vm_part("g4-standard-48").missing
        'no vCPU and memory shape of g4-standard-48 in the catalog'
    """
    shape = machine_shape(machine_type)
    if shape is None:
        why = f"no vCPU and memory shape of {machine_type} in the catalog"
        return VmPart(machine_type, None, None, None, missing=why)
    family = STAND_INS.get(shape.family, shape.family)
    estimate = ""
    if family != shape.family:
        estimate = (
            f"no {shape.family.upper()} row in the catalog read: {family.upper()} rates per "
            "vCPU and GiB applied to its shape"
        )
    od = _price(shape, family_rates(family, "on-demand"), "on-demand")
    spot = _price(shape, family_rates(family, "spot"), "spot")
    return VmPart(machine_type, od, spot, od * (1 - FLEX_START_DISCOUNT), estimate)


def _price(shape: MachineShape, rates: Rates, model: str) -> float:
    # A family priced per vCPU with its memory has every machine at that one ratio (its
    # rows' test holds it), so vcpus * rate counts the memory too; stand-ins have both rates.
    ssd = shape.local_ssd_gb * SSD_GIB_HOUR[model]
    return shape.vcpus * rates.vcpu + shape.memory_gb * rates.gib + ssd
