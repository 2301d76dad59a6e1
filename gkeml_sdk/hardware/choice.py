"""Which hardware a mapping (a spec file's, a dict's) describes: a `TpuSlice` when it names a
TPU `generation`, an `Accelerator` otherwise. `TrainingJob.accelerator`,
`Capacity.accelerator` and `NodePool.hardware` all read hardware here."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.tpu_slice import TpuSlice

# The field that tells the kinds apart: only a TPU slice has a generation.
TPU_KEY = "generation"


def hardware_from_data(data: Any) -> Any:
    """`data` as hardware: a mapping becomes the `TpuSlice` or `Accelerator` its fields
    describe (checked, with their `SpecError` when wrong); anything else comes back as it
    is, for the field to judge.

    Example:
        >>> hardware_from_data({"generation": "v5e", "topology": "2x2"})
        TpuSlice('v5e', '2x2')
        >>> hardware_from_data({"model": "h100", "count": 8})
        Accelerator('h100', count=8)
        >>> hardware_from_data(None) is None
        True
    """
    if isinstance(data, dict):
        kind = TpuSlice if TPU_KEY in data else Accelerator
        return kind.model_validate(data)
    return data


def _hardware_field(data: Any, info: ValidationInfo) -> Accelerator | TpuSlice:
    found = hardware_from_data(data)
    if isinstance(found, Accelerator | TpuSlice):
        return found
    field = info.field_name or "hardware"
    raise fail(
        f"{field}={data!r:.60} is not an Accelerator or a TpuSlice",
        rule="hardware is an Accelerator, a TpuSlice, or a mapping of one's fields "
        "({model: h100, count: 8} or {generation: v5e, topology: 4x4})",
        fix=f"{field}=Accelerator('h100', count=8) or {field}=TpuSlice('v5e', '4x4')",
        field=field,
    )


# A field holding GPUs or a TPU slice, given as either object or as a mapping of its fields.
HardwareChoice = Annotated[Accelerator | TpuSlice, BeforeValidator(_hardware_field)]
