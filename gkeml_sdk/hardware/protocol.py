"""`Hardware`: what a pod's hardware asks of Kubernetes, read from its catalog row.

`Accelerator` and `TpuSlice` implement it (DRA devices will too), and `CPU_ONLY` stands for
no accelerator, so the compiler and the backends read hardware behaviour through this one
shape and never ask which kind of hardware they have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from gkeml_sdk.core.objects import Obj

if TYPE_CHECKING:
    from gkeml_sdk.core.environment import WorkerValue
    from gkeml_sdk.hardware.dra import DeviceRequest


@dataclass(frozen=True, slots=True)
class Billing:
    """How the price book bills a job's hardware: `units` of `unit` at the price of `key`,
    plus the VM part of `machines` VMs of `machine_type` (a fraction for shared GPUs);
    `vm_included` says why no VM part is added (TPU chip prices include their VM).

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> billed = Accelerator("h100", count=8).billing(nodes=2)
        >>> billed.key, billed.unit, billed.units, billed.name
        ('h100', 'GPU-hour', 16.0, 'NVIDIA H100 80GB GPU')
        >>> billed.machine_type, billed.machines
        ('a3-highgpu-8g', 2.0)
    """

    key: str
    unit: str
    units: float
    name: str
    on_demand: bool = True  # False: the machine type is sold only as Spot or flex-start
    machine_type: str = ""
    machines: float = 0.0
    vm_included: str = ""


class Hardware(Protocol):
    """Scheduling, resources and environment of each pod on one kind of hardware.

    Example:
        >>> from gkeml_sdk.hardware.tpu_slice import TpuSlice
        >>> hw: Hardware = TpuSlice("v5e", "4x4")
        >>> hw.resources(), hw.fixed_pods, hw.exclusive_topology
        ({'google.com/tpu': 4}, 4, 'cloud.google.com/gke-nodepool')
    """

    @property
    def slices(self) -> int:
        """Identical groups of pods, one child Job each (TPU multislice); 1 otherwise."""
        ...

    @property
    def fixed_pods(self) -> int | None:
        """Pods the hardware fixes (one per TPU VM, all slices), or None: the job chooses."""
        ...

    @property
    def default_procs_per_node(self) -> int:
        """Processes per pod when the job names none (one per whole GPU)."""
        ...

    @property
    def host_ipc(self) -> bool:
        """True when containers must share the node's IPC namespace (MPS control daemon)."""
        ...

    @property
    def host_network(self) -> bool:
        """True when pods run on the node's network (TPU multislice DCN traffic)."""
        ...

    @property
    def shared_memory(self) -> bool:
        """True when pods need a memory-backed /dev/shm larger than the container default."""
        ...

    @property
    def exclusive_topology(self) -> str | None:
        """Node label each child Job must keep to itself (a multi-host slice is one pool)."""
        ...

    def node_selector(self) -> dict[str, str]:
        """Node labels each pod selects, in manifest order."""
        ...

    def node_affinity(self) -> list[Obj]:
        """Required node affinity `matchExpressions` (empty: none)."""
        ...

    def tolerations(self) -> list[Obj]:
        """Taints of the hardware's nodes that each pod tolerates."""
        ...

    def resources(self) -> dict[str, int]:
        """Extended resources each pod requests and limits (`nvidia.com/gpu`, ...)."""
        ...

    def ports(self) -> list[Obj]:
        """Named container ports the hardware's runtime listens on."""
        ...

    def worker_env(self) -> tuple[tuple[str, WorkerValue], ...]:
        """Variables the hardware's runtime reads, each with what it carries."""
        ...

    def fixed_env(self) -> dict[str, str]:
        """Variables with fixed values each container gets (MPS client limits)."""
        ...

    def notes(self) -> list[str]:
        """What a job on this hardware should know (shared GPUs' risks), one sentence each."""
        ...

    def device_requests(self) -> tuple[DeviceRequest, ...]:
        """Devices each pod claims through Dynamic Resource Allocation (empty: none)."""
        ...

    def billing(self, nodes: int) -> Billing:
        """What a job of `nodes` pods on this hardware is billed for (see `Billing`)."""
        ...

    def check_provisioning(self, *, spot: bool) -> None:
        """Raise `SpecError` when the hardware cannot be had this way (on-demand or Spot)."""
        ...


def toleration(key: str) -> Obj:
    """A `NoSchedule` toleration of taint `key`, whatever its value.

    Example:
        >>> toleration("nvidia.com/gpu")["operator"]
        'Exists'
    """
    return {"key": key, "operator": "Exists", "effect": "NoSchedule"}


class NoDevice:
    """The `Hardware` answers of pods that ask their nodes for no device: no affinity beyond
    a selector, no taint to tolerate, no extended resources, ports, variables, notes or DRA
    claims (`CPU_ONLY` and `CpuMachine` share them).

    Example:
        >>> CPU_ONLY.tolerations(), CPU_ONLY.device_requests()
        ([], ())
    """

    __slots__ = ()

    def node_affinity(self) -> list[Obj]:
        """No affinity."""
        return []

    def tolerations(self) -> list[Obj]:
        """No taints."""
        return []

    def resources(self) -> dict[str, int]:
        """No extended resources."""
        return {}

    def ports(self) -> list[Obj]:
        """No ports."""
        return []

    def worker_env(self) -> tuple[tuple[str, WorkerValue], ...]:
        """No variables."""
        return ()

    def fixed_env(self) -> dict[str, str]:
        """No variables."""
        return {}

    def notes(self) -> list[str]:
        """Nothing to know."""
        return []

    def device_requests(self) -> tuple[DeviceRequest, ...]:
        """No DRA claims."""
        return ()


@dataclass(frozen=True, slots=True)
class CpuOnly(NoDevice):
    """No accelerator: the pod asks the node for nothing special.

    Example:
        >>> CPU_ONLY.node_selector(), CPU_ONLY.resources(), CPU_ONLY.fixed_pods
        ({}, {}, None)
    """

    slices: int = 1
    fixed_pods: int | None = None
    default_procs_per_node: int = 1
    host_ipc: bool = False
    host_network: bool = False
    shared_memory: bool = False
    exclusive_topology: str | None = None

    def node_selector(self) -> dict[str, str]:
        """No node labels."""
        return {}

    def billing(self, nodes: int) -> Billing:
        """No accelerator and no machine type: nothing the price tables can bill."""
        return Billing("", "VM-hour", float(nodes), "CPU-only node (no accelerator)")

    def check_provisioning(self, *, spot: bool) -> None:
        """CPU nodes come either way."""


CPU_ONLY = CpuOnly()
