"""What a node pool request is: the extra networks and taints of its nodes, and every field of
`NodePool` with its meaning and the facts derived from them. The rules and the API's JSON read
a pool through `NodePoolFields`; `nodepools.model.NodePool` adds the checks and `to_dict()`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gkeml_sdk.core.model import SpecModel
from gkeml_sdk.hardware.choice import MachineChoice
from gkeml_sdk.hardware.network_row import NetworkStack
from gkeml_sdk.hardware.network_stacks import machine_stack
from gkeml_sdk.hardware.pool_facts import DRA_NODE_LABELS, GpuDriver
from gkeml_sdk.hardware.pool_shape import PoolShape
from gkeml_sdk.scheduling.catalog import Mode, ProvisioningMode, mode
from gkeml_sdk.scheduling.node_storage import (
    DEFAULT_BOOT_DISK_GB,
    boot_disk_allocatable,
    bundled_local_ssds,
    local_ssd_allocatable,
)
from gkeml_sdk.scheduling.reservation import reservation_of
from gkeml_sdk.scheduling.rules import capacity_mode


class NodeNetwork(SpecModel):
    """An extra VPC network (and its subnetwork) for one extra NIC of a GPUDirect machine.

    Example:
        >>> NodeNetwork(network="gpu-net-1", subnetwork="gpu-sub-1").network
        'gpu-net-1'
    """

    network: str = Field(description="The VPC network of the extra interface.")
    subnetwork: str = Field(description="Its subnetwork.")


class NodeTaint(SpecModel):
    """A taint every node of the pool carries: only pods that tolerate it land there (a
    tenant's dedicated nodes).

    Example:
        >>> NodeTaint(key="gkeml.dev/dedicated-to", value="tenant-a").effect
        'NoSchedule'
    """

    key: str = Field(description="The taint's key.")
    value: str = Field(default="", description="The taint's value.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        default="NoSchedule",
        description="What the taint does to pods that do not tolerate it.",
    )


class NodePoolFields(SpecModel):
    """The fields of a `NodePool` and what they imply (its shape, machine type, networks)."""

    name: str = Field(
        description="The node pool's name (a multi-host TPU slice adds -0, -1, ... per slice)."
    )
    hardware: MachineChoice = Field(
        description="The accelerator of each node: `Accelerator(...)` or `TpuSlice(...)`, or "
        "`CpuMachine(...)` for CPU HPC nodes (given `machine_type` alone, the pool derives "
        "it); from YAML a mapping, whose fields say which kind it is."
    )
    spot: bool = Field(default=False, description="Spot VMs (cheaper, preemptible).")
    provisioning: Mode = Field(
        default="standard",
        description='How VMs are obtained: "standard", "flex-start" or "queued" (DWS), as '
        "`TrainingJob(provisioning=...)`; Spot is spelled spot=True.",
    )
    machine_type: str | None = Field(
        default=None,
        description="Compute Engine machine type; None derives it from the hardware.",
    )
    boot_disk_gb: int | None = Field(
        default=None,
        description="Boot disk size of each node (GB, 10 to 65536); None: GKE's 100. It holds "
        "the nodes' ephemeral storage (emptyDir volumes such as a model server's download "
        "cache) unless the machine's Local SSDs do.",
    )
    local_ssd_ephemeral: bool | None = Field(
        default=None,
        description="Back the nodes' ephemeral storage with the Local SSDs the machine comes "
        "with (A2 Ultra, A3, A4; GKE's ephemeralStorageLocalSsdConfig); None: where the "
        "machine has them.",
    )
    min_nodes: int = Field(default=0, description="Autoscaling floor.")
    max_nodes: int | None = Field(
        default=None,
        description="Autoscaling ceiling; None: the slice's VMs (multi-host TPU), else 1.",
    )
    initial_nodes: int = Field(default=0, description="Nodes created with the pool.")
    zones: tuple[str, ...] = Field(
        default=(), description="Zones of the pool's nodes; empty: the cluster's."
    )
    reservation: str | None = Field(
        default=None,
        description="A specific reservation to consume (shared: projects/P/reservations/R).",
    )
    compact: bool = Field(
        default=False, description="Compact placement (VMs close together for low latency)."
    )
    placement_policy: str | None = Field(
        default=None, description="A Compute Engine resource or workload policy name."
    )
    gpu_driver: GpuDriver | None = Field(
        default=None,
        description='GPU driver GKE installs ("latest", "default"), or "disabled" (you apply '
        'NVIDIA\'s driver installer); None: "latest", "disabled" for DRA (GKE requires it).',
    )
    max_run_seconds: int | None = Field(default=None, description="Run limit of flex-start VMs.")
    shutdown_grace_seconds: Literal[30, 120] | None = Field(
        default=None,
        description="Spot nodes: how long a reclaimed node delays its shutdown for its pods "
        "(kubelet graceful node shutdown; the last 15 s go to system pods); None: GKE's 30.",
    )
    additional_networks: tuple[NodeNetwork, ...] = Field(
        default=(), description="Extra VPC networks of the nodes (GPUDirect NICs)."
    )
    accelerator_network_profile: Literal["auto", "none"] | None = Field(
        default=None,
        description='"auto": GKE creates and attaches the GPUDirect networks; "none": bring '
        'your own; None: "auto" where the machine\'s stack supports it, unless '
        "additional_networks are given.",
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="Kubernetes labels of the nodes."
    )
    taints: tuple[NodeTaint, ...] = Field(
        default=(),
        description="Taints of the nodes beside the accelerator's and the capacity mode's, "
        "e.g. a tenant's dedicated-node taint.",
    )

    @property
    def shape(self) -> PoolShape:
        """Machine type, accelerator and slice layout, from the hardware's catalog row."""
        return self.hardware.pool_shape()

    @property
    def capacity_mode(self) -> ProvisioningMode:
        """The catalog row of how the pool's VMs are provisioned (standard, spot, ...)."""
        return mode(capacity_mode(self.spot, self.provisioning))

    @property
    def network_stack(self) -> NetworkStack | None:
        """The inter-node networking stack of the pool's machine type, None for plain."""
        return machine_stack(self.node_machine_type)

    @property
    def network_profile(self) -> Literal["auto", "none"]:
        """The accelerator network profile the pool is created with (see the field).

        Example:
            >>> from gkeml_sdk import Accelerator, NodePool
            >>> NodePool(name="m", hardware=Accelerator("h100-mega", count=8)).network_profile
            'auto'
        """
        if self.accelerator_network_profile is not None:
            return self.accelerator_network_profile
        stack = self.network_stack
        if stack is not None and stack.network_profile and not self.additional_networks:
            return "auto"
        return "none"

    @property
    def pool_names(self) -> list[str]:
        """One name per node pool: `name`, or `name-<i>` per slice of a multislice."""
        pools = self.shape.pools
        return [self.name] if pools == 1 else [f"{self.name}-{i}" for i in range(pools)]

    @property
    def node_machine_type(self) -> str:
        """The machine type the pool's VMs use."""
        return self.machine_type or self.shape.machine_type

    @property
    def local_ssds(self) -> int:
        """Local SSD disks that hold the nodes' ephemeral storage (0: the boot disk does)."""
        if self.local_ssd_ephemeral is False:
            return 0
        return bundled_local_ssds(self.node_machine_type)

    @property
    def node_ephemeral_storage(self) -> int:
        """Bytes of ephemeral storage pods may request on each node (`scheduling.node_storage`).

        Example:
            >>> from gkeml_sdk import Accelerator, NodePool
            >>> NodePool(name="l4", hardware=Accelerator("l4")).node_ephemeral_storage
            47060071478
        """
        if self.local_ssds:
            return local_ssd_allocatable(self.local_ssds)
        return boot_disk_allocatable(self.boot_disk_gb or DEFAULT_BOOT_DISK_GB)

    @property
    def node_bounds(self) -> tuple[int, int]:
        """(min, max) nodes of each pool for the autoscaler."""
        fixed = self.shape.fixed_nodes
        return self.min_nodes, self.max_nodes or fixed or 1

    @property
    def driver(self) -> GpuDriver:
        """The GPU driver setting the pool is created with (see `gpu_driver`)."""
        if self.gpu_driver is not None:
            return self.gpu_driver
        return "disabled" if self.hardware.device_requests() else "latest"

    @property
    def node_labels(self) -> dict[str, str]:
        """The Kubernetes labels of the nodes the request sets: a reservation's, DRA's (GKE's
        device plugin off, NVIDIA's DRA kubelet plugin and GKE's autoscaler on), `labels`."""
        found = reservation_of(self.reservation).node_labels() if self.reservation else {}
        if self.hardware.device_requests():
            found.update(DRA_NODE_LABELS)
        return {**found, **self.labels}

    @property
    def single_zone(self) -> bool:
        """True when all nodes must share one zone (compact placement, multi-host slices)."""
        return self.compact or self.shape.fixed_nodes is not None
