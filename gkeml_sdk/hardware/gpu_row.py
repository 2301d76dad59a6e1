"""What one GPU row of the catalog holds (`GpuModel`), the Compute Engine machine types that
carry GPUs, and the N1 shapes GKE accepts per GPU count (https://cloud.google.com/compute/docs/gpus)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gkeml_sdk.hardware.gpu_labels import (
    ACCELERATOR_LABEL,
    ARCH_LABEL,
    DEFAULT_ARCH,
    GPU_RESOURCE,
    GPU_TAINT_KEY,
)


@dataclass(frozen=True, slots=True)
class MachineType:
    """A Compute Engine machine type and a number of GPUs it carries; `on_demand` is False
    for shapes sold only as Spot or flex-start; `network` names the inter-node networking
    stack its nodes offer (`gkeml_sdk.hardware.network_stacks`), None for plain pod networking;
    `topology`: its nodes carry GKE's gce-topology block/subblock/host labels (A3 and newer),
    which Kueue's Topology-Aware Scheduling places pods by."""

    name: str
    gpus: int
    on_demand: bool = True
    network: str | None = None
    topology: bool = False


@dataclass(frozen=True, slots=True)
class GpuModel:
    """One GPU model as GKE sees it.

    Example:
        >>> from gkeml_sdk.hardware.gpus import gpu
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
    # How pods reach and use it; every NVIDIA GPU shares these, a new vendor overrides them.
    resource: str = GPU_RESOURCE
    selector_label: str = ACCELERATOR_LABEL
    taint_key: str = GPU_TAINT_KEY
    # PyTorch data loaders and NCCL use /dev/shm; the container default of 64 MiB is too small.
    shared_memory: bool = True
    # CUDA compute capability (NVIDIA's CUDA GPU list): bfloat16 needs 8.0, native fp8 8.9,
    # LLM engines 7.0. Keyword-only, and required: every row names it.
    compute_capability: float = field(kw_only=True)
    # Node pools: flex-start VMs come on accelerator-optimized machines except A4X and G4
    # (Compute Engine "About Flex-start VMs"); compact placement takes A100, L4 and H100 only
    # (GKE "Define compact placement for GKE nodes").
    flex_start: bool = field(default=False, kw_only=True)
    compact_placement: bool = field(default=False, kw_only=True)
    # The start of NVML's product name, which NVIDIA's DRA driver publishes as the
    # `productName` device attribute; "" selects by memory alone.
    nvml_name: str = field(default="", kw_only=True)

    @property
    def arch_labels(self) -> dict[str, str]:
        """The architecture label pods select on non-x86 nodes (A4X: arm64), whose
        `kubernetes.io/arch` taint they then tolerate (`arch_taints`).

        Example:
            >>> from gkeml_sdk.hardware.gpus import gpu
            >>> gpu("gb200").arch_labels, gpu("h100").arch_labels
            ({'kubernetes.io/arch': 'arm64'}, {})
        """
        return {} if self.arch == DEFAULT_ARCH else {ARCH_LABEL: self.arch}

    @property
    def arch_taints(self) -> tuple[str, ...]:
        """Taint keys of the architecture GKE puts on non-x86 nodes."""
        return tuple(self.arch_labels)

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
            >>> from gkeml_sdk.hardware.gpus import gpu
            >>> gpu("t4").machine_named("n1-standard-4", 2)
            MachineType(name='n1-standard-4', gpus=2, on_demand=True, network='fast-socket',
                        topology=False)
        """
        named = [m for m in self.machine_types if m.name == name]
        return next((m for m in named if m.gpus == gpus), named[0] if named else None)

    def gpu_counts_on(self, name: str) -> tuple[int, ...]:
        """GPU counts machine type `name` can carry with this GPU."""
        return tuple(sorted({m.gpus for m in self.machine_types if m.name == name}))

    @property
    def one_gpu_row(self) -> list[str]:
        """Machine types that carry exactly one GPU (where MPS may grant several shares)."""
        return list(dict.fromkeys(m.name for m in self.machine_types if m.gpus == 1))

    @property
    def machine_names(self) -> list[str]:
        """Every machine type name, once each, in catalog order."""
        return list(dict.fromkeys(m.name for m in self.machine_types))

    def mig_instances(self, profile: str) -> int | None:
        """MIG instances per GPU for `profile`, or None when the device plugin rejects it."""
        return dict(self.mig_profiles).get(profile)


# NCCL Fast Socket works on any GPU node pool with gVNIC (GKE "NCCL Fast Socket" page); the
# GPUDirect families carry their own stack instead.
FAST_SOCKET = "fast-socket"

# N1 shapes: (name, vCPUs, memory GB), also what `hardware.machines` bills. Shared-core
# f1-micro/g1-small take no GPU.
N1_SHAPES = tuple(
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


def n1_machines(ceilings: dict[int, tuple[int, int]]) -> tuple[MachineType, ...]:
    """Every N1 shape GKE accepts per GPU count, the default first for each count; all
    offer NCCL Fast Socket.
    `ceilings`: GPU count -> (max vCPUs, max memory GB), from https://cloud.google.com/compute/
    docs/gpus; for P100 x4 the stricter zonal ceiling, so it holds anywhere."""
    rows = []
    for count, (max_vcpus, max_gb) in ceilings.items():
        allowed = [n for n, vcpus, gb in N1_SHAPES if vcpus <= max_vcpus and gb <= max_gb]
        default = _N1_DEFAULT[count]
        rows += [
            MachineType(n, count, network=FAST_SOCKET)
            for n in [default, *(n for n in allowed if n != default)]
        ]
    return tuple(rows)


def family_machines(
    prefix: str, counts: tuple[int, ...], suffix: str = "g", network: str | None = FAST_SOCKET
) -> tuple[MachineType, ...]:
    """Machine types named `<prefix>-<count><suffix>`, one per GPU count, offering `network`.

    Example:
        >>> [m.name for m in family_machines("a2-highgpu", (1, 2))]
        ['a2-highgpu-1g', 'a2-highgpu-2g']
    """
    return tuple(MachineType(f"{prefix}-{c}{suffix}", c, network=network) for c in counts)
