"""`Accelerator`: NVIDIA GPUs (whole, MIG slices or shared), checked against the catalog at
construction."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import model_validator

from gkeml_sdk.core.model import fail
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware import gpu_labels
from gkeml_sdk.hardware import pool_facts as node_pools
from gkeml_sdk.hardware.dra import DeviceRequest, check_dra, gpu_requests
from gkeml_sdk.hardware.gpu_fields import GpuFields
from gkeml_sdk.hardware.pool_shape import PoolShape
from gkeml_sdk.hardware.protocol import Billing, toleration
from gkeml_sdk.hardware.rules import check_mig, check_on_demand, check_sharing, check_whole_count
from gkeml_sdk.hardware.sharing import mps_env, sharing_notes

if TYPE_CHECKING:
    from gkeml_sdk.core.environment import WorkerValue


class Accelerator(GpuFields):
    """NVIDIA GPUs for each node (pod) of a job.

    Example:
        >>> Accelerator("h100", count=8).machine_type_name
        'a3-highgpu-8g'
        >>> Accelerator("h100", mig="1g.10gb").gpu_memory_gb
        10.0
        >>> Accelerator("l4", sharing="time-sharing", clients_per_gpu=4).physical_gpus
        0.25
    """

    def __init__(self, model: str | None = None, /, **data: Any) -> None:
        if model is not None:
            data["model"] = model
        super().__init__(**data)

    @model_validator(mode="after")
    def _check(self) -> Accelerator:
        row = self.gpu
        if self.count < 1:
            raise fail(
                f"count={self.count}: a pod asks for at least one GPU",
                rule=f"{row.resource} requests are positive integers",
                fix="count=1, or accelerator=None for a CPU-only job",
                field="count",
            )
        if self.machine_type is not None and row.machine_named(self.machine_type) is None:
            raise fail(
                f"{row.display} does not come on machine type {self.machine_type!r}",
                rule=f"{row.label} is offered on {', '.join(row.machine_names)}",
                fix=f"machine_type={row.machine_for(row.counts[0]).name!r} or leave it unset",
                field="machine_type",
            )
        if self.mig is not None:
            check_mig(self)
        if self.sharing is not None or self.clients_per_gpu is not None:
            check_sharing(self)
        if self.mig is None and self.sharing is None:
            check_whole_count(self)
        check_dra(self)
        return self

    def check_provisioning(self, *, spot: bool) -> None:
        """Refuse on-demand capacity on a machine type sold only as Spot or flex-start (the
        rule is `hardware.rules.check_on_demand`)."""
        check_on_demand(self, spot=spot)

    @property
    def label(self) -> str:
        """The `cloud.google.com/gke-accelerator` node label value."""
        return self.gpu.label

    @property
    def machine_type_name(self) -> str:
        """Name of the node machine type."""
        return self.node_machine.name

    @property
    def physical_gpus(self) -> float:
        """Physical GPUs one pod occupies (fractions for MIG and sharing), for cost."""
        share = 1.0
        if self.mig is not None:
            share /= self.gpu.mig_instances(self.mig) or 1
        if self.sharing is not None and self.clients_per_gpu:
            share /= self.clients_per_gpu
        return self.count * share

    @property
    def gpu_memory_gb(self) -> float:
        """GPU memory one pod can use (a MIG slice's memory, or a fair share when shared)."""
        per_unit = float(self.gpu.memory_gb)
        if self.mig is not None:
            match = re.search(r"\.(\d+)gb", self.mig)
            per_unit = float(match.group(1)) if match else per_unit
        if self.sharing is not None and self.clients_per_gpu:
            per_unit /= self.clients_per_gpu
        return self.count * per_unit

    @property
    def price_key(self) -> str:
        """Key of this accelerator in the price book."""
        return self.gpu.key

    @property
    def capacity_name(self) -> str:
        """A capacity's default name (MIG nodes are other nodes, so another name): e.g.
        `Accelerator("a100-80gb", mig="1g.10gb").capacity_name == "a100-80gb-1g-10gb"`."""
        return self.model + (f"-{self.mig.replace('.', '-')}" if self.mig else "")

    def billing(self, nodes: int) -> Billing:
        """Billed per physical GPU-hour, and the VM part for the share of each machine the GPUs
        take: a MIG slice or shared GPU is its fraction of one."""
        name, units = f"{self.gpu.display} GPU", self.physical_gpus * nodes
        machine = self.node_machine
        return Billing(
            self.gpu.key,
            "GPU-hour",
            units,
            name,
            self.on_demand_offered,
            machine_type=machine.name,
            machines=units / machine.gpus,
        )

    # Hardware (gkeml_sdk.hardware.protocol): labels, taint and resource from the GPU's row.

    @property
    def slices(self) -> int:
        """GPU pods form one group."""
        return 1

    @property
    def fixed_pods(self) -> None:
        """The job chooses its node count."""
        return None

    @property
    def default_procs_per_node(self) -> int:
        """One process per whole GPU; one for a MIG slice or a shared GPU."""
        return self.count if self.mig is None and self.sharing is None else 1

    @property
    def host_ipc(self) -> bool:
        """MPS clients reach the node's MPS control daemon over IPC."""
        return self.sharing == "mps"

    @property
    def host_network(self) -> bool:
        """GPU pods keep the pod network (GPUDirect adds interfaces instead)."""
        return False

    @property
    def shared_memory(self) -> bool:
        """Whether the GPU's workloads need a large /dev/shm (the row says)."""
        return self.gpu.shared_memory

    @property
    def exclusive_topology(self) -> None:
        """GPU pods of one job may share node pools."""
        return None

    def node_selector(self) -> dict[str, str]:
        """The GPU model's label (Arm nodes: and arch), and the MIG partition size."""
        row = self.gpu
        selector = {row.selector_label: row.label, **row.arch_labels}
        if self.mig:
            selector[gpu_labels.PARTITION_LABEL] = self.mig
        return selector

    def node_affinity(self) -> list[Obj]:
        """Shared GPUs: nodes of the sharing strategy and client count (and, for several MPS
        shares, a 1-GPU machine type)."""
        if self.sharing is None:
            return []
        # GKE pages disagree on the strategy label's spelling, so accept both.
        expressions: list[Obj] = [
            {
                "key": gpu_labels.SHARING_STRATEGY_LABEL,
                "operator": "In",
                "values": list(gpu_labels.SHARING_LABEL_VALUES[self.sharing]),
            },
            {
                "key": gpu_labels.MAX_SHARED_CLIENTS_LABEL,
                "operator": "In",
                "values": [str(self.clients_per_gpu)],
            },
        ]
        if self.sharing == "mps" and self.count > 1:
            # MPS grants more than one share per container only on nodes with exactly one GPU
            # (GKE's NVIDIA MPS page): pin the pod to those machine types.
            one_gpu = [self.machine_type] if self.machine_type else self.gpu.one_gpu_row
            expressions.append(
                {"key": gpu_labels.INSTANCE_TYPE_LABEL, "operator": "In", "values": list(one_gpu)}
            )
        return expressions

    def tolerations(self) -> list[Obj]:
        """The GPU nodes' taint."""
        return [toleration(key) for key in (self.gpu.taint_key, *self.gpu.arch_taints)]

    def resources(self) -> dict[str, int]:
        """`count` GPUs (or MIG slices, or shares); none when DRA claims them."""
        return {} if self.allocation == "dra" else {self.gpu.resource: self.count}

    def device_requests(self) -> tuple[DeviceRequest, ...]:
        """The DRA device requests of each pod (empty with the device plugin)."""
        return gpu_requests(self)

    def ports(self) -> list[Obj]:
        """No runtime ports."""
        return []

    def worker_env(self) -> tuple[tuple[str, WorkerValue], ...]:
        """No variables: CUDA finds its devices."""
        return ()

    def fixed_env(self) -> dict[str, str]:
        """MPS clients' thread and memory limits (`hardware.sharing.mps_env`)."""
        return mps_env(self)

    def notes(self) -> list[str]:
        """What clients of a shared GPU risk (`hardware.sharing.sharing_notes`)."""
        return sharing_notes(self)

    def pool_shape(self) -> PoolShape:
        """The node pool these GPUs need: machine type and accelerator config (PoolHardware).

        Example:
            >>> s = Accelerator("a100-40gb", mig="1g.5gb").pool_shape()
            >>> s.machine_type, s.accelerator_count, s.gpu_partition_size
            ('a2-highgpu-1g', 1, '1g.5gb')
        """
        row, machine = self.gpu, self.node_machine
        same_count = dict.fromkeys(m.name for m in row.machine_types if m.gpus == machine.gpus)
        return PoolShape(
            display=row.display,
            machine_type=machine.name,
            machine_types=(machine.name,)
            if self.machine_type
            else tuple(dict.fromkeys(same_count)),
            taint_key=row.taint_key,
            accelerator_type=row.label,
            accelerator_count=machine.gpus,
            gpu_partition_size=self.mig,
            sharing_strategy=node_pools.SHARING_ENUM[self.sharing] if self.sharing else None,
            clients_per_gpu=self.clients_per_gpu or 0,
            flex_start=row.flex_start,
            compact_placement=row.compact_placement,
            quota_units=machine.gpus,
            request_units=machine.gpus * self._shares_per_gpu,
        )

    @property
    def _shares_per_gpu(self) -> int:
        # MIG instances of the profile, each shared by the time-sharing/MPS clients.
        instances = (self.gpu.mig_instances(self.mig) or 1) if self.mig else 1
        return instances * (self.clients_per_gpu or 1)

    def __repr__(self) -> str:
        extra = f", mig={self.mig!r}" if self.mig else ""
        if self.allocation == "dra":
            extra += ", allocation='dra'"
        if self.sharing:
            extra += f", sharing={self.sharing!r}, clients_per_gpu={self.clients_per_gpu}"
        return f"Accelerator({self.model!r}, count={self.count}{extra})"

    __str__ = __repr__
