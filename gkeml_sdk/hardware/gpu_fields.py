"""What an `Accelerator` is made of: its fields, each checked alone against the catalog, and
what follows from them alone (the GPU's catalog row, the node's machine type). The rules in
hardware/rules.py and hardware/dra.py read these; hardware/accelerator.py adds the checks that
combine fields and everything a job compiles from them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from gkeml_sdk.core.lookup import AmbiguousName, UnknownName
from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.hardware import gpu_row, gpus

Allocation = Literal["device-plugin", "dra"]
SharingStrategy = Literal["time-sharing", "mps"]


class GpuFields(SpecModel):
    """The fields of an `Accelerator`, which is what users construct."""

    model: str = Field(
        description='GPU model by short name ("h100", "a100-80gb", "l4") or GKE label value.'
    )
    count: int = Field(
        1, description="Whole GPUs per node (pod); a count some machine type of the GPU carries."
    )
    mig: str | None = Field(
        None, description='A MIG profile ("1g.10gb"): each pod gets one slice of a GPU.'
    )
    sharing: SharingStrategy | None = Field(
        None, description='Share each GPU between pods: "time-sharing" or "mps".'
    )
    clients_per_gpu: int | None = Field(None, description="Pods sharing one GPU (with `sharing`).")
    machine_type: str | None = Field(
        None, description="Compute Engine machine type; None picks the one that carries `count`."
    )
    allocation: Allocation = Field(
        "device-plugin",
        description='"device-plugin", or "dra" to claim GPUs through DRA (docs/dra.md).',
    )

    @field_validator("model")
    @classmethod
    def _known_model(cls, value: str) -> str:
        try:
            return gpus.gpu(value).key
        except UnknownName as exc:
            raise fail(
                str(exc),
                rule="the GPU models GKE offers differ in memory, machines and price, so the "
                "name must pick one (GKE labels it in cloud.google.com/gke-accelerator)",
                fix=" or ".join(f"Accelerator({name!r}, ...)" for name in _suggested(exc)),
                field="model",
            ) from None

    @property
    def on_demand_offered(self) -> bool:
        """False when the node's machine type is sold only as Spot or flex-start."""
        return self.node_machine.on_demand

    @property
    def gpu(self) -> gpu_row.GpuModel:
        """The catalog row of this GPU model."""
        return gpus.gpu(self.model)

    @property
    def node_machine(self) -> gpu_row.MachineType:
        """The machine type of the node each pod lands on."""
        row = self.gpu
        if self.machine_type is not None:
            found = row.machine_named(self.machine_type, self.count)
            if found is not None:
                return found
        if self.mig is None and self.sharing is None and self.count in row.counts:
            return row.machine_for(self.count)
        # MIG slices and shared GPUs fit any of the GPU's machines: the smallest one sold in
        # every mode, so the pool exists on-demand too (A3 High below 8 GPUs is Spot or
        # flex-start only: Compute Engine "GPU machine types").
        return next((m for m in row.machine_types if m.on_demand), row.machine_for(row.counts[0]))


def _suggested(exc: UnknownName) -> list[str]:
    if isinstance(exc, AmbiguousName):
        return exc.valid
    return [exc.closest or "h100"]
