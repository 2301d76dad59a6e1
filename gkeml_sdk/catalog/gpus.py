"""NVIDIA GPUs on GKE: label values, memory, machine types, MIG profiles (gke-facts §1-§4).

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

# Sharing (gke-facts §4): clients per physical GPU, for both strategies.
MIN_SHARED_CLIENTS = 2
MAX_SHARED_CLIENTS = 48
# Node label spellings differ between GKE pages (§4 CONFLICT); match both.
SHARING_LABEL_VALUES = {"time-sharing": ("time-sharing", "TIME_SHARING"), "mps": ("mps", "MPS")}


@dataclass(frozen=True)
class MachineType:
    """A Compute Engine machine type and the fixed number of GPUs it carries."""

    name: str
    gpus: int


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

    def machine_named(self, name: str) -> MachineType | None:
        """The machine type called `name`, if this GPU comes on it."""
        return next((m for m in self.machine_types if m.name == name), None)

    @property
    def compute_capability(self) -> float:
        """CUDA compute capability: bfloat16 needs 8.0, native fp8 8.9, LLM engines 7.0."""
        return COMPUTE_CAPABILITY[self.key]

    def mig_instances(self, profile: str) -> int | None:
        """MIG instances per GPU for `profile`, or None when the device plugin rejects it."""
        return dict(self.mig_profiles).get(profile)


def _n1(counts: tuple[int, ...]) -> tuple[MachineType, ...]:
    # N1 takes 1-8 GPUs on one machine shape; these sizes stay within every vCPU ceiling of §1.2.
    sizes = {1: "n1-standard-8", 2: "n1-standard-16", 4: "n1-standard-32", 8: "n1-standard-64"}
    return tuple(MachineType(sizes[c], c) for c in counts)


def _family(prefix: str, counts: tuple[int, ...], suffix: str = "g") -> tuple[MachineType, ...]:
    return tuple(MachineType(f"{prefix}-{c}{suffix}", c) for c in counts)


_H100_MIG = (("1g.10gb", 7), ("1g.20gb", 4), ("2g.20gb", 3), ("3g.40gb", 2), ("7g.80gb", 1))

GPUS: tuple[GpuModel, ...] = (
    GpuModel("t4", "nvidia-tesla-t4", "NVIDIA T4", 16, _n1((1, 2, 4)), aliases=("tesla-t4",)),
    GpuModel("p4", "nvidia-tesla-p4", "NVIDIA P4", 8, _n1((1, 2, 4)), aliases=("tesla-p4",)),
    GpuModel(
        "v100", "nvidia-tesla-v100", "NVIDIA V100", 16, _n1((1, 2, 4, 8)), aliases=("tesla-v100",)
    ),
    GpuModel(
        "p100", "nvidia-tesla-p100", "NVIDIA P100", 16, _n1((1, 2, 4)), aliases=("tesla-p100",)
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
        (*_family("a3-highgpu", (1, 2, 4, 8)), MachineType("a3-edgegpu-8g", 8)),
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
