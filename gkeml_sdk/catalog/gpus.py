"""NVIDIA GPUs on GKE: label values, memory, machine types, MIG profiles.

Sources: https://cloud.google.com/compute/docs/gpus,
https://cloud.google.com/kubernetes-engine/docs/how-to/gpus and
https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus.

Adding a GPU is one `GpuModel(...)` row below plus a test row.
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.catalog.names import resolve

ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
SHARING_STRATEGY_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
MAX_SHARED_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
GPU_RESOURCE = "nvidia.com/gpu"
GPU_TAINT_KEY = "nvidia.com/gpu"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

# GPU sharing (time-sharing and MPS): clients per physical GPU, for both strategies.
MIN_SHARED_CLIENTS = 2
MAX_SHARED_CLIENTS = 48
# Node label spellings differ between GKE pages; match both.
SHARING_LABEL_VALUES = {"time-sharing": ("time-sharing", "TIME_SHARING"), "mps": ("mps", "MPS")}


@dataclass(frozen=True)
class MachineType:
    """A Compute Engine machine type and a number of GPUs it carries; `on_demand` is False
    for shapes sold only as Spot or flex-start."""

    name: str
    gpus: int
    on_demand: bool = True


@dataclass(frozen=True)
class GpuModel:
    """One GPU model as GKE sees it.

    Example:
        >>> gpu("h100").label, gpu("h100").machine_for(8).name
        ('nvidia-h100-80gb', 'a3-highgpu-8g')
    """

    key: str
    label: str
    display: str
    memory_gb: int
    machine_types: tuple[MachineType, ...]
    arch: str = "amd64"
    mig_profiles: tuple[tuple[str, int], ...] = ()
    aliases: tuple[str, ...] = ()

    @property
    def counts(self) -> tuple[int, ...]:
        """GPU counts per node that some machine type offers, ascending."""
        return tuple(sorted({m.gpus for m in self.machine_types}))

    @property
    def max_gpus_per_node(self) -> int:
        """The largest machine type's GPU count."""
        return max(self.counts)

    def machine_for(self, count: int) -> MachineType:
        """The first listed machine type carrying exactly `count` GPUs (KeyError if none)."""
        for machine in self.machine_types:
            if machine.gpus == count:
                return machine
        raise KeyError(count)

    def machine_named(self, name: str, gpus: int | None = None) -> MachineType | None:
        """The machine type called `name` (with `gpus` GPUs when it takes several counts, as
        N1 shapes do), if this GPU comes on it.

        Example:
            >>> gpu("t4").machine_named("n1-standard-4", 2)
            MachineType(name='n1-standard-4', gpus=2, on_demand=True)
        """
        named = [m for m in self.machine_types if m.name == name]
        return next((m for m in named if m.gpus == gpus), named[0] if named else None)

    def gpu_counts_on(self, name: str) -> tuple[int, ...]:
        """GPU counts machine type `name` can carry with this GPU."""
        return tuple(sorted({m.gpus for m in self.machine_types if m.name == name}))

    @property
    def one_gpu_machines(self) -> list[str]:
        """Machine types that carry exactly one GPU (where MPS may grant several shares)."""
        return list(dict.fromkeys(m.name for m in self.machine_types if m.gpus == 1))

    @property
    def machine_names(self) -> list[str]:
        """Every machine type name, once each, in catalog order."""
        return list(dict.fromkeys(m.name for m in self.machine_types))

    @property
    def compute_capability(self) -> float:
        """CUDA compute capability: bfloat16 needs 8.0, native fp8 8.9, LLM engines 7.0."""
        return COMPUTE_CAPABILITY[self.key]

    def mig_instances(self, profile: str) -> int | None:
        """MIG instances per GPU for `profile`, or None when the device plugin rejects it."""
        return dict(self.mig_profiles).get(profile)


# N1 shapes: (name, vCPUs, memory GB). Shared-core f1-micro/g1-small take no GPU.
_N1_SHAPES = tuple(
    (f"n1-{family}-{vcpus}", vcpus, vcpus * per_vcpu)
    for family, per_vcpu, sizes in (
        ("standard", 3.75, (1, 2, 4, 8, 16, 32, 64, 96)),
        ("highmem", 6.5, (2, 4, 8, 16, 32, 64, 96)),
        ("highcpu", 0.9, (2, 4, 8, 16, 32, 64, 96)),
    )
    for vcpus in sizes
)
# The shape chosen when the user names none, per GPU count: within every ceiling below.
_N1_DEFAULT = {1: "n1-standard-8", 2: "n1-standard-16", 4: "n1-standard-32", 8: "n1-standard-64"}


def _n1(ceilings: dict[int, tuple[int, int]]) -> tuple[MachineType, ...]:
    """Every N1 shape GKE accepts per GPU count, the default first for each count.
    `ceilings`: GPU count -> (max vCPUs, max memory GB), from https://cloud.google.com/compute/
    docs/gpus; for P100 x4 the stricter zonal ceiling, so it holds anywhere."""
    rows = []
    for count, (max_vcpus, max_gb) in ceilings.items():
        allowed = [n for n, vcpus, gb in _N1_SHAPES if vcpus <= max_vcpus and gb <= max_gb]
        default = _N1_DEFAULT[count]
        rows += [MachineType(n, count) for n in [default, *(n for n in allowed if n != default)]]
    return tuple(rows)


def _family(prefix: str, counts: tuple[int, ...], suffix: str = "g") -> tuple[MachineType, ...]:
    return tuple(MachineType(f"{prefix}-{c}{suffix}", c) for c in counts)


_H100_MIG = (("1g.10gb", 7), ("1g.20gb", 4), ("2g.20gb", 3), ("3g.40gb", 2), ("7g.80gb", 1))

GPUS: tuple[GpuModel, ...] = (
    GpuModel(
        "t4",
        "nvidia-tesla-t4",
        "NVIDIA T4",
        16,
        _n1({1: (48, 312), 2: (48, 312), 4: (96, 624)}),
        aliases=("tesla-t4",),
    ),
    GpuModel(
        "p4",
        "nvidia-tesla-p4",
        "NVIDIA P4",
        8,
        _n1({1: (24, 156), 2: (48, 312), 4: (96, 624)}),
        aliases=("tesla-p4",),
    ),
    GpuModel(
        "v100",
        "nvidia-tesla-v100",
        "NVIDIA V100",
        16,
        _n1({1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)}),
        aliases=("tesla-v100",),
    ),
    GpuModel(
        "p100",
        "nvidia-tesla-p100",
        "NVIDIA P100",
        16,
        _n1({1: (16, 104), 2: (32, 208), 4: (64, 208)}),
        aliases=("tesla-p100",),
    ),
    GpuModel(
        "l4",
        "nvidia-l4",
        "NVIDIA L4",
        24,
        (
            MachineType("g2-standard-4", 1),
            MachineType("g2-standard-8", 1),
            MachineType("g2-standard-12", 1),
            MachineType("g2-standard-16", 1),
            MachineType("g2-standard-32", 1),
            MachineType("g2-standard-24", 2),
            MachineType("g2-standard-48", 4),
            MachineType("g2-standard-96", 8),
        ),
    ),
    GpuModel(
        "a100-40gb",
        "nvidia-tesla-a100",
        "NVIDIA A100 40GB",
        40,
        (*_family("a2-highgpu", (1, 2, 4, 8)), MachineType("a2-megagpu-16g", 16)),
        mig_profiles=(("1g.5gb", 7), ("2g.10gb", 3), ("3g.20gb", 2), ("7g.40gb", 1)),
        aliases=("a100", "tesla-a100"),
    ),
    GpuModel(
        "a100-80gb",
        "nvidia-a100-80gb",
        "NVIDIA A100 80GB",
        80,
        _family("a2-ultragpu", (1, 2, 4, 8)),
        mig_profiles=(("1g.10gb", 7), ("2g.20gb", 3), ("3g.40gb", 2), ("7g.80gb", 1)),
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
            MachineType("a3-highgpu-8g", 8),
            MachineType("a3-edgegpu-8g", 8),
        ),
        mig_profiles=_H100_MIG,
        aliases=("h100-80gb",),
    ),
    GpuModel(
        "h100-mega",
        "nvidia-h100-mega-80gb",
        "NVIDIA H100 Mega 80GB",
        80,
        (MachineType("a3-megagpu-8g", 8),),
        mig_profiles=_H100_MIG,
        aliases=("h100-mega-80gb",),
    ),
    GpuModel(
        "h200",
        "nvidia-h200-141gb",
        "NVIDIA H200 141GB",
        141,
        (MachineType("a3-ultragpu-8g", 8),),
        mig_profiles=(
            ("1g.18gb", 7),
            ("1g.35gb", 4),
            ("2g.35gb", 3),
            ("3g.71gb", 2),
            ("4g.71gb", 1),
            ("7g.141gb", 1),
        ),
        aliases=("h200-141gb",),
    ),
    GpuModel(
        "b200",
        "nvidia-b200",
        "NVIDIA B200",
        180,
        (MachineType("a4-highgpu-8g", 8),),
        mig_profiles=(
            ("1g.23gb", 7),
            ("1g.45gb", 4),
            ("2g.45gb", 3),
            ("3g.90gb", 2),
            ("4g.90gb", 1),
            ("7g.180gb", 1),
        ),
    ),
    GpuModel(
        "gb200",
        "nvidia-gb200",
        "NVIDIA GB200",
        186,
        (MachineType("a4x-highgpu-4g", 4),),
        arch="arm64",
        mig_profiles=(
            ("1g.23gb", 7),
            ("1g.47gb", 4),
            ("2g.47gb", 3),
            ("3g.93gb", 2),
            ("4g.93gb", 1),
            ("7g.186gb", 1),
        ),
    ),
    GpuModel(
        "gb300",
        "nvidia-gb300",
        "NVIDIA GB300",
        279,
        (MachineType("a4x-maxgpu-4g-metal", 4),),
        arch="arm64",
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
    ),
)


# NVIDIA's CUDA GPU list, by catalog key.
COMPUTE_CAPABILITY: dict[str, float] = {
    "t4": 7.5,
    "p4": 6.1,
    "v100": 7.0,
    "p100": 6.0,
    "l4": 8.9,
    "a100-40gb": 8.0,
    "a100-80gb": 8.0,
    "h100": 9.0,
    "h100-mega": 9.0,
    "h200": 9.0,
    "b200": 10.0,
    "gb200": 10.0,
    "gb300": 10.3,
    "rtx-pro-6000": 12.0,
}


def _index() -> dict[str, GpuModel]:
    table: dict[str, GpuModel] = {}
    for row in GPUS:
        for name in (row.key, row.label, *row.aliases):
            table[name] = row
    return table


_BY_NAME = _index()


def gpu(name: str) -> GpuModel:
    """The GPU row for a short name, alias or `gke-accelerator` label value.

    Raises `UnknownName` (with the closest match) for anything else.

    Example:
        >>> gpu("a100-80gb").label
        'nvidia-a100-80gb'
    """
    return resolve("GPU", name, _BY_NAME, gpu_names())


def gpu_names() -> list[str]:
    """Canonical short names of every GPU, in catalog order."""
    return [row.key for row in GPUS]
