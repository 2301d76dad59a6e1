"""`NodePool`: a typed GKE node pool request derived from an `Accelerator` or `TpuSlice`,
checked at construction against what GKE accepts, and compiled to the GKE API's JSON
(`nodepools.manifests`) for review; `GkeClient` sends it as `google.cloud.container_v1`
messages (`backends.gke.messages`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from gkeml_sdk.core.model import SpecModel
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.choice import HardwareChoice
from gkeml_sdk.hardware.network_row import NetworkStack
from gkeml_sdk.hardware.network_stacks import machine_stack
from gkeml_sdk.hardware.pool_facts import GpuDriver
from gkeml_sdk.hardware.pool_shape import PoolShape
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.nodepools.rules import check_pool, pool_notes
from gkeml_sdk.scheduling.catalog import Mode, ProvisioningMode, mode
from gkeml_sdk.scheduling.rules import capacity_mode, spot_spelling


class NodeNetwork(SpecModel):
    """An extra VPC network (and its subnetwork) for one extra NIC of a GPUDirect machine.

    Example:
        >>> NodeNetwork(network="gpu-net-1", subnetwork="gpu-sub-1").network
        'gpu-net-1'

    Attributes:
        network: The VPC network of the extra interface.
        subnetwork: Its subnetwork.
    """

    network: str
    subnetwork: str


class NodeTaint(SpecModel):
    """A taint every node of the pool carries: only pods that tolerate it land there (a
    tenant's dedicated nodes).

    Example:
        >>> NodeTaint(key="gkeml.dev/dedicated-to", value="tenant-a").effect
        'NoSchedule'
    """

    key: str
    value: str = ""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = "NoSchedule"


class NodePool(SpecModel):
    """A node pool for one kind of accelerator: machine type, accelerator config, how its VMs
    are provisioned, placement, autoscaling bounds, taints and labels.

    A multi-host TPU slice is one node pool per slice (`pool_names`), each of exactly the
    slice's VMs. Pools scale to 0 when idle.

    Example:
        >>> pool = NodePool.for_accelerator(Accelerator("h100", count=8), name="h100",
        ...                                 provisioning="queued", max_nodes=4)
        >>> pool.shape.machine_type, pool.pool_names
        ('a3-highgpu-8g', ['h100'])
        >>> (request,) = pool.to_dict()["nodePools"]
        >>> request["queuedProvisioning"], request["config"].get("flexStart")
        ({'enabled': True}, True)

    Attributes:
        name: The node pool's name (a multi-host TPU slice adds -0, -1, ... per slice).
        hardware: The accelerator of each node: `Accelerator(...)` or `TpuSlice(...)`.
        spot: Spot VMs (cheaper, preemptible).
        provisioning: How VMs are obtained: "standard", "flex-start" or "queued" (DWS).
        machine_type: Compute Engine machine type; None derives it from the hardware.
        min_nodes: Autoscaling floor.
        max_nodes: Autoscaling ceiling; None: the slice's VMs (multi-host TPU), else 1.
        initial_nodes: Nodes created with the pool.
        zones: Zones of the pool's nodes; empty: the cluster's.
        reservation: A specific reservation to consume (shared: projects/P/reservations/R).
        compact: Compact placement (VMs close together for low latency).
        placement_policy: A Compute Engine resource or workload policy name.
        gpu_driver: GPU driver GKE installs ("latest", "default"); None: "latest" on GPUs.
        max_run_seconds: Run limit of flex-start VMs.
        additional_networks: Extra VPC networks of the nodes (GPUDirect NICs).
        accelerator_network_profile: "auto": GKE creates and attaches the GPUDirect networks;
            "none": bring your own; None: "auto" where the machine's stack supports it.
        labels: Kubernetes labels of the nodes.
        taints: Taints of the nodes beside the accelerator's and the capacity mode's, e.g. a
            tenant's dedicated-node taint.
    """

    name: str
    hardware: HardwareChoice  # from YAML a mapping: its fields say which kind it is
    spot: bool = False
    # The same modes as `TrainingJob(provisioning=...)`; "spot" is spelled spot=True.
    provisioning: Mode = "standard"
    machine_type: str | None = None
    min_nodes: int = 0
    max_nodes: int | None = None  # None: the slice's VMs (multi-host TPU), else 1
    initial_nodes: int = 0
    zones: tuple[str, ...] = ()
    reservation: str | None = None  # a specific reservation (shared: projects/P/reservations/R)
    compact: bool = False
    placement_policy: str | None = None  # a Compute Engine resource or workload policy name
    gpu_driver: GpuDriver | None = None  # None: "latest" on GPUs
    max_run_seconds: int | None = None  # flex-start VMs' run limit
    additional_networks: tuple[NodeNetwork, ...] = ()
    # "auto": GKE creates and attaches the GPUDirect networks; None: "auto" on machines whose
    # stack supports it unless additional_networks are given; "none": bring your own networks.
    accelerator_network_profile: Literal["auto", "none"] | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    taints: tuple[NodeTaint, ...] = ()  # beside the accelerator's and the capacity mode's

    @model_validator(mode="before")
    @classmethod
    def _spot_spelling(cls, data: Any) -> Any:
        return spot_spelling(data)

    @model_validator(mode="after")
    def _check(self) -> NodePool:
        check_pool(self)
        return self

    @classmethod
    def for_accelerator(
        cls, hardware: Accelerator | TpuSlice, *, name: str, **options: Any
    ) -> NodePool:
        """The node pool `hardware` needs, with `options` (any other field) applied.

        Example:
            >>> NodePool.for_accelerator(TpuSlice("v5e", "4x4", slices=2), name="v5e").pool_names
            ['v5e-0', 'v5e-1']
        """
        return cls(name=name, hardware=hardware, **options)

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
    def node_bounds(self) -> tuple[int, int]:
        """(min, max) nodes of each pool for the autoscaler."""
        fixed = self.shape.fixed_nodes
        return self.min_nodes, self.max_nodes or fixed or 1

    @property
    def single_zone(self) -> bool:
        """True when all nodes must share one zone (compact placement, multi-host slices)."""
        return self.compact or self.shape.fixed_nodes is not None

    @property
    def notes(self) -> list[str]:
        """What the pool still needs from outside this request (cluster networks, ...)."""
        return pool_notes(self)

    def to_dict(self) -> dict[str, Any]:
        """The pools as the API's JSON (camelCase, as `gcloud ... --format=json` shows them),
        shaped like a `ListNodePoolsResponse`: `{"nodePools": [...]}`. Plain dicts: no GKE
        client library needed.

        Example:
            >>> pool = NodePool(name="l4", hardware=Accelerator("l4"), spot=True)
            >>> pool.to_dict()["nodePools"][0]["config"]["spot"]
            True
        """
        from gkeml_sdk.nodepools.manifests import pools_json

        return pools_json(self)

    def __repr__(self) -> str:
        mode = ", spot=True" if self.spot else ""
        if self.provisioning != "standard":
            mode += f", provisioning={self.provisioning!r}"
        return f"NodePool({self.name!r}, {self.hardware!r}{mode})"

    __str__ = __repr__
