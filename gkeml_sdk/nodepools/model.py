"""`NodePool`: a typed GKE node pool request derived from an `Accelerator` or `TpuSlice`,
checked at construction against what GKE accepts, and compiled to the GKE API's JSON
(`nodepools.manifests`) for review; `GkeClient` sends it as `google.cloud.container_v1`
messages (`backends.gke.messages`)."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.cpu_machine import CpuMachine
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.nodepools.fields import NodeNetwork as NodeNetwork
from gkeml_sdk.nodepools.fields import NodePoolFields
from gkeml_sdk.nodepools.fields import NodeTaint as NodeTaint
from gkeml_sdk.nodepools.rules import check_pool, pool_notes, room_for
from gkeml_sdk.scheduling.rules import spot_spelling


class NodePool(NodePoolFields):
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
    """

    @model_validator(mode="before")
    @classmethod
    def _spot_spelling(cls, data: Any) -> Any:
        data = spot_spelling(data)
        # A CPU HPC pool names its machine type alone: `NodePool(machine_type="h4d-...")`.
        if isinstance(data, dict) and data.get("hardware") is None and data.get("machine_type"):
            data = {**data, "hardware": {"machine_type": data["machine_type"]}}
        return data

    @model_validator(mode="after")
    def _check(self) -> NodePool:
        check_pool(self)
        return self

    @classmethod
    def for_accelerator(
        cls,
        hardware: Accelerator | TpuSlice | CpuMachine,
        *,
        name: str,
        ephemeral_storage: str | None = None,
        **options: Any,
    ) -> NodePool:
        """The node pool `hardware` needs, with `options` (any other field) applied.
        `ephemeral_storage`: what each pod asks of a node (a model server's
        `ServeModel.ephemeral_storage`, the cache it downloads weights to); the pool keeps
        the machine's Local SSDs or GKE's 100 GB boot disk when they hold it, else gets a
        boot disk that does (`boot_disk_gb`).

        Example:
            >>> NodePool.for_accelerator(TpuSlice("v5e", "4x4", slices=2), name="v5e").pool_names
            ['v5e-0', 'v5e-1']
            >>> NodePool.for_accelerator(Accelerator("l4", count=8), name="l4",
            ...                          ephemeral_storage="145Gi").boot_disk_gb
            281
        """
        pool = cls(name=name, hardware=hardware, **options)
        if ephemeral_storage is None:
            return pool
        room = room_for(pool, ephemeral_storage)
        return cls(name=name, hardware=hardware, **{**options, **room}) if room else pool

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
