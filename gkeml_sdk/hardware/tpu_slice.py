"""`TpuSlice`: a Cloud TPU slice (or several identical ones), checked against the catalog at
construction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator, model_validator

from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware import tpus
from gkeml_sdk.hardware.dra import DeviceRequest, refuse_for_tpu
from gkeml_sdk.hardware.gpu_fields import Allocation
from gkeml_sdk.hardware.pool_shape import PoolShape
from gkeml_sdk.hardware.protocol import Billing, toleration

if TYPE_CHECKING:
    from gkeml_sdk.core.environment import WorkerValue


class TpuSlice(SpecModel):
    """A Cloud TPU slice (or several identical slices: multislice).

    Example:
        >>> s = TpuSlice("v5e", "4x4")
        >>> s.chips, s.hosts, s.multi_host
        (16, 4, True)
    """

    generation: str = Field(description='TPU generation: "v4", "v5e", "v5p", "v6e" or "tpu7x".')
    topology: str = Field(
        description="The slice's sides in chips, AxB (v5e, v6e) or AxBxC (v4, v5p, TPU7x)."
    )
    slices: int = Field(1, description="Identical slices of the job (more than 1: multislice).")
    allocation: Allocation = Field(
        "device-plugin",
        description='How pods claim the chips: "device-plugin" (DRA is refused for TPUs).',
    )

    def __init__(
        self, generation: str | None = None, topology: str | None = None, /, **data: Any
    ) -> None:
        if generation is not None:
            data["generation"] = generation
        if topology is not None:
            data["topology"] = topology
        super().__init__(**data)

    @field_validator("generation")
    @classmethod
    def _known_generation(cls, value: str) -> str:
        try:
            return tpus.tpu(value).key
        except UnknownName as exc:
            raise fail(
                str(exc),
                rule="TPU generations GKE offers as node pools",
                fix=f"TpuSlice({exc.closest or 'v5e'!r}, ...)",
                field="generation",
            ) from None

    @field_validator("topology")
    @classmethod
    def _canonical_topology(cls, value: str) -> str:
        canonical = tpus.canonical_topology(value)
        if canonical is None:
            raise fail(
                f"topology {value!r} is not a TPU topology",
                rule="a topology is the slice's sides in chips, written AxB or AxBxC",
                fix="topology='4x4' (v5e, v6e) or topology='2x2x2' (v4, v5p, TPU7x)",
                field="topology",
            )
        return canonical

    @model_validator(mode="after")
    def _check(self) -> TpuSlice:
        refuse_for_tpu(self.allocation)
        row = self.tpu
        if not row.is_valid(self.topology):
            valid = row.topologies()
            shown = ", ".join(valid[:12]) + (", ..." if len(valid) > 12 else "")
            form = "AxB" if row.dims == 2 else "AxBxC"
            if self.topology.count("x") + 1 != row.dims:
                rule = f"{row.display} topologies are {form}"
            else:  # the right shape, but not a slice GKE offers
                rule = f"{row.display} offers a fixed set of {form} slices, and not this one"
            if row.dims == 3:
                rule += "; beyond 2x2x1/2x2x2/2x2x4/2x4x4 every side is a multiple of 4, A<=B<=C"
            ordered = "x".join(sorted(self.topology.split("x"), key=int))
            fix = (
                f"topology={ordered!r} (sides in ascending order)" if row.is_valid(ordered) else ""
            )
            raise fail(
                f"topology {self.topology!r} is not offered for {row.display}",
                rule=rule,
                fix=fix or f"topology= one of {shown}",
                field="topology",
            )
        if self.slices < 1:
            raise fail(
                f"slices={self.slices}", rule="a job uses at least one slice", fix="slices=1"
            )
        if self.slices > 1 and not self.multi_host:
            raise fail(
                f"multislice over single-host {self.topology} slices",
                rule="multislice needs multi-host slices of identical type and topology",
                fix="slices=1, or a multi-host topology such as "
                + next(t for t in row.topologies() if row.hosts(t) > 1),
                field="slices",
            )
        return self

    @property
    def tpu(self) -> tpus.TpuGeneration:
        """The catalog row of this generation."""
        return tpus.tpu(self.generation)

    @property
    def label(self) -> str:
        """The `cloud.google.com/gke-tpu-accelerator` node label value."""
        return self.tpu.label

    @property
    def chips(self) -> int:
        """Chips in one slice."""
        return tpus.chips_of(self.topology)

    @property
    def hosts(self) -> int:
        """VMs (pods) in one slice."""
        return self.tpu.hosts(self.topology)

    @property
    def chips_per_host(self) -> int:
        """Chips each pod requests (`google.com/tpu`)."""
        return self.tpu.chips_per_host(self.topology)

    @property
    def machine_type_name(self) -> str:
        """Node machine type."""
        return self.tpu.machine_type(self.topology)

    @property
    def multi_host(self) -> bool:
        """True when one slice spans several VMs (scheduled all-or-nothing)."""
        return self.hosts > 1

    @property
    def total_hosts(self) -> int:
        """Pods across all slices."""
        return self.hosts * self.slices

    @property
    def price_key(self) -> str:
        """Key of this generation in the price book."""
        return self.tpu.key

    @property
    def capacity_name(self) -> str:
        """The name a cluster's capacity of these slices gets by default.

        Example:
            >>> TpuSlice("v5e", "4x4").capacity_name
            'v5e-4x4'
        """
        return f"{self.generation}-{self.topology}"

    def billing(self, nodes: int) -> Billing:
        """Billed per chip-hour, for every chip of every slice (`nodes` are their hosts)."""
        units = float(self.chips * self.slices)
        # Cloud TPU prices a chip-hour with its TPU VM host (cloud.google.com/tpu/pricing).
        included = "Cloud TPU chip-hour prices include the TPU VM"
        return Billing(
            self.tpu.key, "chip-hour", units, f"{self.tpu.display} chip", vm_included=included
        )

    # Hardware (gkeml_sdk.hardware.protocol): one pod per TPU VM, chips and ports from the row.

    @property
    def fixed_pods(self) -> int:
        """One pod per VM of every slice."""
        return self.total_hosts

    @property
    def default_procs_per_node(self) -> int:
        """One process per VM drives all of its chips."""
        return 1

    @property
    def host_ipc(self) -> bool:
        """TPU pods keep their own IPC namespace."""
        return False

    @property
    def host_network(self) -> bool:
        """A multislice's pods use the node's network for their DCN traffic, as XPK runs them."""
        return self.slices > 1

    @property
    def shared_memory(self) -> bool:
        """TPU pods use the container's default /dev/shm."""
        return False

    @property
    def exclusive_topology(self) -> str | None:
        """A multi-host slice is one node pool, which each child Job keeps to itself."""
        return self.tpu.slice_pool_label if self.multi_host else None

    def node_selector(self) -> dict[str, str]:
        """The generation's accelerator label and the slice's topology."""
        row = self.tpu
        return {row.selector_label: row.label, row.topology_label: self.topology}

    def node_affinity(self) -> list[Obj]:
        """No affinity beyond the selector."""
        return []

    def tolerations(self) -> list[Obj]:
        """The TPU nodes' taint."""
        return [toleration(self.tpu.taint_key)]

    def resources(self) -> dict[str, int]:
        """Every chip of the pod's VM."""
        return {self.tpu.resource: self.chips_per_host}

    def ports(self) -> list[Obj]:
        """The TPU runtime's ports (and megascale's DCN port for a multislice)."""
        ports = [*self.tpu.ports, *([self.tpu.dcn_port] if self.slices > 1 else [])]
        return [{"name": name, "containerPort": port} for name, port in ports]

    def device_requests(self) -> tuple[DeviceRequest, ...]:
        """No DRA claims: chips come from GKE's TPU device plugin."""
        return ()

    def worker_env(self) -> tuple[tuple[str, WorkerValue], ...]:
        """One slice lists its hosts; several find each other through megascale."""
        row = self.tpu
        return row.single_slice_env if self.slices == 1 else row.multislice_env

    def fixed_env(self) -> dict[str, str]:
        """No fixed variables."""
        return {}

    def notes(self) -> list[str]:
        """Nothing beyond the slice's own rules."""
        return []

    def check_provisioning(self, *, spot: bool) -> None:
        """TPU slices come on-demand and as Spot."""

    def pool_shape(self) -> PoolShape:
        """The node pools this slice needs (PoolHardware): one per slice, holding all of a
        multi-host slice's VMs; GKE tells the accelerator from the machine type.

        Example:
            >>> TpuSlice("v6e", "2x2").pool_shape().fixed_nodes is None
            True
        """
        row = self.tpu
        return PoolShape(
            display=f"{row.display} {self.topology}",
            machine_type=self.machine_type_name,
            machine_types=(self.machine_type_name,),
            taint_key=row.taint_key,
            tpu_topology=self.topology if self.multi_host else None,
            fixed_nodes=self.hosts if self.multi_host else None,
            pools=self.slices,
            flex_start=row.flex_start,
            workload_policy=row.uses_workload_policy and self.multi_host,
            quota_units=self.chips_per_host,
            request_units=self.chips_per_host,
        )

    def __repr__(self) -> str:
        extra = f", slices={self.slices}" if self.slices > 1 else ""
        return f"TpuSlice({self.generation!r}, {self.topology!r}{extra})"

    __str__ = __repr__
