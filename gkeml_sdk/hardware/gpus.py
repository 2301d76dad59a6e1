"""NVIDIA GPUs on GKE: label values, memory, machine types, MIG profiles.

Sources: https://cloud.google.com/compute/docs/gpus,
https://cloud.google.com/kubernetes-engine/docs/how-to/gpus and
https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus.
What a row holds is in `gpu_row`, the node labels all GPUs share in `gpu_labels`.

Adding a GPU is one `GpuModel(...)` row below plus a test row.
"""

from __future__ import annotations

from gkeml_sdk.core.lookup import AmbiguousName, resolve
from gkeml_sdk.hardware.gpu_row import (
    FAST_SOCKET,
    GpuModel,
    MachineType,
    family_machines,
    n1_machines,
)

_H100_MIG = (("1g.10gb", 7), ("1g.20gb", 4), ("2g.20gb", 3), ("3g.40gb", 2), ("7g.80gb", 1))

GPUS: tuple[GpuModel, ...] = (
    GpuModel(
        "t4",
        "nvidia-tesla-t4",
        "NVIDIA T4",
        16,
        n1_machines({1: (48, 312), 2: (48, 312), 4: (96, 624)}),
        aliases=("tesla-t4",),
        compute_capability=7.5,
        nvml_name="Tesla T4",
    ),
    GpuModel(
        "p4",
        "nvidia-tesla-p4",
        "NVIDIA P4",
        8,
        n1_machines({1: (24, 156), 2: (48, 312), 4: (96, 624)}),
        aliases=("tesla-p4",),
        compute_capability=6.1,
        nvml_name="Tesla P4",
    ),
    GpuModel(
        "v100",
        "nvidia-tesla-v100",
        "NVIDIA V100",
        16,
        n1_machines({1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)}),
        aliases=("tesla-v100",),
        compute_capability=7.0,
        nvml_name="Tesla V100",
    ),
    GpuModel(
        "p100",
        "nvidia-tesla-p100",
        "NVIDIA P100",
        16,
        n1_machines({1: (16, 104), 2: (32, 208), 4: (64, 208)}),
        aliases=("tesla-p100",),
        compute_capability=6.0,
        nvml_name="Tesla P100",
    ),
    GpuModel(
        "l4",
        "nvidia-l4",
        "NVIDIA L4",
        24,
        tuple(
            MachineType(f"g2-standard-{vcpus}", gpus, network=FAST_SOCKET)
            for vcpus, gpus in (
                (4, 1),
                (8, 1),
                (12, 1),
                (16, 1),
                (32, 1),
                (24, 2),
                (48, 4),
                (96, 8),
            )
        ),
        compute_capability=8.9,
        flex_start=True,
        compact_placement=True,
        nvml_name="NVIDIA L4",
    ),
    GpuModel(
        "a100-40gb",
        "nvidia-tesla-a100",
        "NVIDIA A100 40GB",
        40,
        (
            *family_machines("a2-highgpu", (1, 2, 4, 8)),
            MachineType("a2-megagpu-16g", 16, network=FAST_SOCKET),
        ),
        mig_profiles=(("1g.5gb", 7), ("2g.10gb", 3), ("3g.20gb", 2), ("7g.40gb", 1)),
        aliases=("tesla-a100",),
        compute_capability=8.0,
        flex_start=True,
        compact_placement=True,
        nvml_name="NVIDIA A100",
    ),
    GpuModel(
        "a100-80gb",
        "nvidia-a100-80gb",
        "NVIDIA A100 80GB",
        80,
        family_machines("a2-ultragpu", (1, 2, 4, 8)),
        mig_profiles=(("1g.10gb", 7), ("2g.20gb", 3), ("3g.40gb", 2), ("7g.80gb", 1)),
        compute_capability=8.0,
        flex_start=True,
        compact_placement=True,
        nvml_name="NVIDIA A100",
    ),
    GpuModel(
        "h100",
        "nvidia-h100-80gb",
        "NVIDIA H100 80GB",
        80,
        (
            # A3 High with 1, 2 or 4 GPUs is sold only as Spot or flex-start: Compute Engine
            # "GPU machine types", A3 High (https://cloud.google.com/compute/docs/gpus).
            *(MachineType(f"a3-highgpu-{c}g", c, on_demand=False) for c in (1, 2, 4)),
            MachineType("a3-highgpu-8g", 8, network="tcpx", topology=True),
            MachineType("a3-edgegpu-8g", 8, network="tcpx"),
        ),
        mig_profiles=_H100_MIG,
        aliases=("h100-80gb",),
        compute_capability=9.0,
        flex_start=True,
        compact_placement=True,
        nvml_name="NVIDIA H100",
    ),
    GpuModel(
        "h100-mega",
        "nvidia-h100-mega-80gb",
        "NVIDIA H100 Mega 80GB",
        80,
        (MachineType("a3-megagpu-8g", 8, network="tcpxo", topology=True),),
        mig_profiles=_H100_MIG,
        aliases=("h100-mega-80gb",),
        compute_capability=9.0,
        flex_start=True,
        nvml_name="NVIDIA H100",
    ),
    GpuModel(
        "h200",
        "nvidia-h200-141gb",
        "NVIDIA H200 141GB",
        141,
        (MachineType("a3-ultragpu-8g", 8, network="rdma-a3u", topology=True),),
        mig_profiles=(
            ("1g.18gb", 7),
            ("1g.35gb", 4),
            ("2g.35gb", 3),
            ("3g.71gb", 2),
            ("4g.71gb", 1),
            ("7g.141gb", 1),
        ),
        aliases=("h200-141gb",),
        compute_capability=9.0,
        flex_start=True,
        nvml_name="NVIDIA H200",
    ),
    GpuModel(
        "b200",
        "nvidia-b200",
        "NVIDIA B200",
        180,
        (MachineType("a4-highgpu-8g", 8, network="rdma-a4", topology=True),),
        mig_profiles=(
            ("1g.23gb", 7),
            ("1g.45gb", 4),
            ("2g.45gb", 3),
            ("3g.90gb", 2),
            ("4g.90gb", 1),
            ("7g.180gb", 1),
        ),
        compute_capability=10.0,
        flex_start=True,
        nvml_name="NVIDIA B200",
    ),
    GpuModel(
        "gb200",
        "nvidia-gb200",
        "NVIDIA GB200",
        186,
        (MachineType("a4x-highgpu-4g", 4, network="rdma-a4x", topology=True),),
        arch="arm64",
        mig_profiles=(
            ("1g.23gb", 7),
            ("1g.47gb", 4),
            ("2g.47gb", 3),
            ("3g.93gb", 2),
            ("4g.93gb", 1),
            ("7g.186gb", 1),
        ),
        compute_capability=10.0,
        nvml_name="NVIDIA GB200",
    ),
    GpuModel(
        "gb300",
        "nvidia-gb300",
        "NVIDIA GB300",
        279,
        (MachineType("a4x-maxgpu-4g-metal", 4),),
        arch="arm64",
        compute_capability=10.3,
        nvml_name="NVIDIA GB300",
    ),
    GpuModel(
        "rtx-pro-6000",
        "nvidia-rtx-pro-6000",
        "NVIDIA RTX PRO 6000",
        96,
        (
            MachineType("g4-standard-48", 1),
            MachineType("g4-standard-96", 2),
            MachineType("g4-standard-192", 4),
            MachineType("g4-standard-384", 8),
        ),
        mig_profiles=(
            ("1g.24gb", 4),
            ("2g.48gb", 2),
            ("4g.96gb", 1),
            ("1g.24gb+gfx", 4),
            ("1g.24gb-me", 4),
            ("1g.24gb+me", 1),
            ("1g.24gb+me.all", 1),
            ("2g.48gb+gfx", 2),
            ("2g.48gb-me", 2),
            ("2g.48gb+me.all", 1),
            ("4g.96gb+gfx", 1),
        ),
        aliases=("rtx-pro", "rtx6000"),
        compute_capability=12.0,
        nvml_name="NVIDIA RTX PRO 6000",
    ),
)

# Names people use for more than one row: refused with the choices rather than guessed.
SHARED_NAMES: dict[str, tuple[str, ...]] = {"a100": ("a100-40gb", "a100-80gb")}


def _index() -> dict[str, GpuModel]:
    table: dict[str, GpuModel] = {}
    for row in GPUS:
        for name in (row.key, row.label, *row.aliases):
            table[name] = row
    return table


_BY_NAME = _index()


def gpu(name: str) -> GpuModel:
    """The GPU row for a short name, alias or `gke-accelerator` label value.

    Raises `UnknownName` (with the closest match) for anything else, and `AmbiguousName`
    (with each choice) for a name of several GPUs.

    Example:
        >>> gpu("a100-80gb").label
        'nvidia-a100-80gb'
        >>> gpu("A100")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.core.lookup.AmbiguousName: GPU 'A100' is ambiguous: 'a100-40gb' (NVIDIA A100...
    """
    # Exact names (every row's own key, as specs store it) skip normalising and the name list.
    found = _BY_NAME.get(name)
    if found is not None:
        return found
    shared = SHARED_NAMES.get(name.strip().lower().replace("_", "-"), ())
    if shared:
        raise AmbiguousName("GPU", name, {key: _BY_NAME[key].display for key in shared})
    return resolve("GPU", name, _BY_NAME, gpu_names())


def gpu_names() -> list[str]:
    """Canonical short names of every GPU, in catalog order."""
    return [row.key for row in GPUS]


def carries_topology(machine_type: str) -> bool | None:
    """Whether nodes of GPU machine type `machine_type` carry GKE's topology labels
    (`MachineType.topology`); None for a machine type that is no GPU row's.

    Example:
        >>> carries_topology("a3-megagpu-8g"), carries_topology("g2-standard-8")
        (True, False)
    """
    rows = [m for g in GPUS for m in g.machine_types if m.name == machine_type]
    return rows[0].topology if rows else None
