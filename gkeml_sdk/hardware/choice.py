"""Which hardware a mapping (a spec file's, a dict's) describes: a `TpuSlice` when it names a
TPU `generation`, a `CpuMachine` when it names only a `machine_type`, an `Accelerator`
otherwise. `TrainingJob.accelerator`, `Capacity.accelerator` and `NodePool.hardware` all read
hardware here; capacities take accelerators only."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.cpu_machine import CpuMachine
from gkeml_sdk.hardware.tpu_slice import TpuSlice

# The fields that tell the kinds apart: only a TPU slice has a generation, and a CPU machine
# has a machine type and no GPU model.
TPU_KEY = "generation"
GPU_KEY = "model"
MACHINE_KEY = "machine_type"


def hardware_from_data(data: Any) -> Any:
    """`data` as hardware: a mapping becomes the `TpuSlice` or `Accelerator` its fields
    describe (checked, with their `SpecError` when wrong); anything else comes back as it
    is, for the field to judge.

    Example:
        >>> hardware_from_data({"generation": "v5e", "topology": "2x2"})
        TpuSlice('v5e', '2x2')
        >>> hardware_from_data({"model": "h100", "count": 8})
        Accelerator('h100', count=8)
        >>> hardware_from_data({"machine_type": "h4d-highmem-192"})
        CpuMachine('h4d-highmem-192')
        >>> hardware_from_data(None) is None
        True
    """
    if isinstance(data, dict):
        kind: type[Accelerator | TpuSlice | CpuMachine] = Accelerator
        if TPU_KEY in data:
            kind = TpuSlice
        elif MACHINE_KEY in data and GPU_KEY not in data:
            kind = CpuMachine
        return kind.model_validate(data)
    return data


def _hardware_field(data: Any, info: ValidationInfo) -> Accelerator | TpuSlice:
    found = hardware_from_data(data)
    if isinstance(found, Accelerator | TpuSlice):
        return found
    field = info.field_name or "hardware"
    if isinstance(found, CpuMachine):
        raise fail(
            f"{field}={found!r}: a capacity is of accelerators",
            rule="CPU machines need no Kueue accelerator capacity: a node pool and a job name "
            "them (NodePool(machine_type=...), TrainingJob(accelerator=CpuMachine(...)))",
            fix=f"{field}=Accelerator('h100', count=8), or drop the capacity",
            field=field,
        )
    raise fail(
        f"{field}={data!r:.60} is not an Accelerator or a TpuSlice",
        rule="hardware is an Accelerator, a TpuSlice, or a mapping of one's fields "
        "({model: h100, count: 8} or {generation: v5e, topology: 4x4})",
        fix=f"{field}=Accelerator('h100', count=8) or {field}=TpuSlice('v5e', '4x4')",
        field=field,
    )


def _machine_field(data: Any, info: ValidationInfo) -> Accelerator | TpuSlice | CpuMachine:
    found = hardware_from_data(data)
    if isinstance(found, CpuMachine):
        return found
    return _hardware_field(found, info)


# A field holding GPUs or a TPU slice, given as either object or as a mapping of its fields.
HardwareChoice = Annotated[Accelerator | TpuSlice, BeforeValidator(_hardware_field)]
# The same, or a CPU machine for tightly coupled HPC (node pools and jobs; not capacities).
MachineChoice = Annotated[Accelerator | TpuSlice | CpuMachine, BeforeValidator(_machine_field)]
