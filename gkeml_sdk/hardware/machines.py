"""What each Compute Engine machine type the catalog uses is made of: vCPUs, memory and
bundled Local SSD, which the VM part of a price is billed on (`pricing.vm`), and the CPU
machines built for tightly coupled HPC (H4D, C3 and C4 HPC shapes), which carry no
accelerator and take compact placement.

Sources (read 2026-12-07): Compute Engine "Accelerator-optimized machine family"
(https://cloud.google.com/compute/docs/accelerator-optimized-machines), "General-purpose
machine family" (N1), "Compute-optimized machine family" (H4D, C3, C4), and the vCPU and
MemoryGiB columns of the SkyPilot GCP catalog (catalogs/v8/gcp/vms.csv), which agree with
them for every A2, A3, G2 and N1 row read.
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.hardware.gpu_row import N1_SHAPES


@dataclass(frozen=True, slots=True)
class MachineShape:
    """One machine type: `vcpus`, `memory_gb` (GiB) and bundled Local SSD (GiB); `family`
    names the price rates it is billed at (`pricing.vm`); `hpc` marks CPU machines for
    tightly coupled HPC, which pools place compactly; `flex_start`: flex-start VMs come on it
    (GPUs, single-host TPUs and H4D: GKE "About flex-start provisioning").

    Example:
        >>> m = machine_shape("a3-highgpu-8g")
        >>> m.vcpus, m.memory_gb, m.local_ssd_gb, m.family
        (208, 1872.0, 6000, 'a3')
    """

    name: str
    vcpus: int
    memory_gb: float
    local_ssd_gb: int = 0
    family: str = ""
    hpc: bool = False
    flex_start: bool = False


def _rows(family: str, shapes: tuple[tuple[str, int, float, int], ...]) -> list[MachineShape]:
    return [MachineShape(n, v, m, ssd, family) for n, v, m, ssd in shapes]


_SSD = 375  # one Local SSD disk, GiB: accelerator-optimized machines bundle whole disks

MACHINES: tuple[MachineShape, ...] = (
    *(MachineShape(n, v, m, 0, "n1") for n, v, m in N1_SHAPES),
    *_rows(
        "g2", tuple((f"g2-standard-{v}", v, 4.0 * v, 0) for v in (4, 8, 12, 16, 24, 32, 48, 96))
    ),
    *_rows(
        "a2",
        (
            ("a2-highgpu-1g", 12, 85.0, 0),
            ("a2-highgpu-2g", 24, 170.0, 0),
            ("a2-highgpu-4g", 48, 340.0, 0),
            ("a2-highgpu-8g", 96, 680.0, 0),
            ("a2-megagpu-16g", 96, 1360.0, 0),
            # A2 Ultra bundles one 375 GiB Local SSD disk per GPU.
            *((f"a2-ultragpu-{g}g", 12 * g, 170.0 * g, _SSD * g) for g in (1, 2, 4, 8)),
        ),
    ),
    # A3 High, Edge and Mega: 26 vCPUs, 234 GiB and two Local SSD disks per GPU.
    *_rows(
        "a3",
        (
            *((f"a3-highgpu-{g}g", 26 * g, 234.0 * g, 2 * _SSD * g) for g in (1, 2, 4, 8)),
            ("a3-edgegpu-8g", 208, 1872.0, 16 * _SSD),
            ("a3-megagpu-8g", 208, 1872.0, 16 * _SSD),
        ),
    ),
    *_rows("a3", (("a3-ultragpu-8g", 224, 2952.0, 32 * _SSD),)),
    *_rows("a4", (("a4-highgpu-8g", 224, 3968.0, 32 * _SSD),)),
    *_rows("a4x", (("a4x-highgpu-4g", 140, 884.0, 32 * _SSD),)),
    # A4X Max (GB300) and G4 (RTX PRO 6000) shapes were not found in a dated source: their
    # VM part is left out of estimates, which say so (`pricing.vm`).
    # CPU machines for tightly coupled HPC (GKE's compact placement takes these families).
    MachineShape("h4d-standard-192", 192, 720.0, 0, "h4d", hpc=True, flex_start=True),
    MachineShape("h4d-highmem-192", 192, 1488.0, 0, "h4d", hpc=True, flex_start=True),
    MachineShape("h4d-highmem-192-lssd", 192, 1488.0, 10 * _SSD, "h4d", hpc=True, flex_start=True),
    MachineShape("c3-standard-176", 176, 704.0, 0, "c3", hpc=True),
    MachineShape("c3-highmem-176", 176, 1408.0, 0, "c3", hpc=True),
    MachineShape("c4-standard-192", 192, 720.0, 0, "c4", hpc=True),
    MachineShape("c4-highmem-192", 192, 1488.0, 0, "c4", hpc=True),
)

_BY_NAME = {row.name: row for row in MACHINES}


def machine_shape(name: str) -> MachineShape | None:
    """The shape of machine type `name`, or None for one the catalog does not list."""
    return _BY_NAME.get(name)


def hpc_machines() -> list[str]:
    """Names of the CPU machine types for tightly coupled HPC, in catalog order.

    Example:
        >>> hpc_machines()[:2]
        ['h4d-standard-192', 'h4d-highmem-192']
    """
    return [row.name for row in MACHINES if row.hpc]
