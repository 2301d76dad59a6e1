"""`CpuMachine`: nodes of one CPU machine type built for tightly coupled HPC (H4D, C3 and C4
HPC shapes), with no accelerator: pools of them take compact placement, jobs on them launch
their ranks themselves (MPI) and are billed for the VMs alone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.hardware.machines import MachineShape, hpc_machines, machine_shape
from gkeml_sdk.hardware.pool_shape import PoolShape
from gkeml_sdk.hardware.protocol import Billing, NoDevice

if TYPE_CHECKING:
    pass

# The label GKE puts on every node with its machine type (Kubernetes well-known label).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


class CpuMachine(SpecModel, NoDevice):
    """Each node is one VM of `machine_type`, a CPU machine for tightly coupled HPC.

    Example:
        >>> hpc = CpuMachine("h4d-highmem-192")
        >>> hpc.node_selector(), hpc.shape.vcpus
        ({'node.kubernetes.io/instance-type': 'h4d-highmem-192'}, 192)
    """

    machine_type: str = Field(
        description='The CPU machine type of each node, e.g. "h4d-highmem-192" (H4D, or the '
        "C3 and C4 HPC shapes)."
    )

    def __init__(self, machine_type: str | None = None, /, **data: Any) -> None:
        if machine_type is not None:
            data["machine_type"] = machine_type
        super().__init__(**data)

    @field_validator("machine_type")
    @classmethod
    def _known(cls, value: str) -> str:
        row = machine_shape(value.strip().lower())
        if row is None or not row.hpc:
            raise fail(
                f"machine_type={value!r} is not a CPU machine for tightly coupled HPC",
                rule="CPU HPC nodes are one of " + ", ".join(hpc_machines()),
                fix="CpuMachine('h4d-highmem-192'), or an Accelerator for GPU nodes",
                field="machine_type",
            )
        return row.name

    @property
    def shape(self) -> MachineShape:
        """vCPUs, memory and Local SSD of the machine type (`hardware.machines`)."""
        row = machine_shape(self.machine_type)
        assert row is not None  # the validator admitted only catalog rows
        return row

    # Hardware (gkeml_sdk.hardware.protocol): CPU pods pinned to the machine type's nodes; the
    # rest of what they ask (nothing) is `NoDevice`'s.

    @property
    def slices(self) -> int:
        """The pods form one group."""
        return 1

    @property
    def fixed_pods(self) -> None:
        """The job chooses its node count."""
        return None

    @property
    def default_procs_per_node(self) -> int:
        """One process per pod: an MPI launcher starts the ranks itself."""
        return 1

    @property
    def host_ipc(self) -> bool:
        """CPU pods keep their own IPC namespace."""
        return False

    @property
    def host_network(self) -> bool:
        """Pods keep the pod network."""
        return False

    @property
    def shared_memory(self) -> bool:
        """MPI ranks on one node talk through /dev/shm, larger than the container default."""
        return True

    @property
    def exclusive_topology(self) -> None:
        """Pods of one job may share node pools."""
        return None

    def node_selector(self) -> dict[str, str]:
        """Nodes of the machine type, by the label every node carries."""
        return {INSTANCE_TYPE_LABEL: self.machine_type}

    def billing(self, nodes: int) -> Billing:
        """Billed for the VMs alone: one per node, at the VM part's rates.

        Example:
            >>> b = CpuMachine("h4d-highmem-192").billing(nodes=4)
            >>> b.key, b.units, b.machine_type, b.machines
            ('', 4.0, 'h4d-highmem-192', 4.0)
        """
        name = f"{self.machine_type} VM"
        return Billing("", "VM-hour", float(nodes), name, machine_type=self.machine_type,
                       machines=float(nodes))  # fmt: skip

    def check_provisioning(self, *, spot: bool) -> None:
        """CPU HPC VMs come on-demand or as Spot."""

    def pool_shape(self) -> PoolShape:
        """A pool of the machine type: no accelerator, no taint, compact placement allowed.

        Example:
            >>> s = CpuMachine("h4d-highmem-192").pool_shape()
            >>> s.machine_type, s.accelerator_type, s.compact_placement, s.taint_key
            ('h4d-highmem-192', None, True, '')
        """
        return PoolShape(
            display=self.machine_type,
            machine_type=self.machine_type,
            machine_types=(self.machine_type,),
            taint_key="",
            flex_start=self.shape.flex_start,
            compact_placement=True,
        )

    def __repr__(self) -> str:
        return f"CpuMachine({self.machine_type!r})"

    __str__ = __repr__
