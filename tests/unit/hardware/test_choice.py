"""One discriminator (`gkeml_sdk.hardware.choice`) turns a mapping into an `Accelerator` or a
`TpuSlice` for every spec that holds hardware: jobs, cluster capacity and node pools read it
alike, with the hardware's own errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import Accelerator, NodePool, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.hardware.choice import hardware_from_data
from gkeml_sdk.setup.capacity_model import Capacity

PACKAGE = Path(__file__).resolve().parents[3] / "gkeml_sdk"


def _job(hw: Any) -> Any:
    job = {"name": "ft", "image": "img", "command": ["x"], "accelerator": hw}
    return TrainingJob.model_validate(job).accelerator


def _capacity(hw: Any) -> Any:
    return Capacity.model_validate({"accelerator": hw}).accelerator


def _pool(hw: Any) -> Any:
    return NodePool.model_validate({"name": "p", "hardware": hw}).hardware


# Each spec that holds hardware: its hardware field, read from a mapping (as YAML gives it).
READERS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "TrainingJob": ("accelerator", _job),
    "Capacity": ("accelerator", _capacity),
    "NodePool": ("hardware", _pool),
}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"model": "h100", "count": 8}, Accelerator("h100", count=8)),
        ({"model": "a100-40gb", "mig": "1g.5gb"}, Accelerator("a100-40gb", mig="1g.5gb")),
        ({"generation": "v5e", "topology": "4x4"}, TpuSlice("v5e", "4x4")),
        ({"generation": "v6e", "topology": "4x4", "slices": 2}, TpuSlice("v6e", "4x4", slices=2)),
    ],
)
@pytest.mark.parametrize("reader", READERS)
def test_every_spec_reads_a_mapping_as_the_same_hardware(reader, data, expected) -> None:
    assert hardware_from_data(data) == expected
    assert READERS[reader][1](data) == expected


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({}, "Accelerator: field 'model' is required"),
        ({"generation": "v5e"}, "TpuSlice: field 'topology' is required"),
        ({"generation": "v5e", "topology": "2x2", "sharing": "mps"}, "unknown field 'sharing'"),
        ({"model": "h100", "generation": "v5e", "topology": "2x2"}, "unknown field 'model'"),
        ({"model": "h10"}, "Did you mean 'h100'"),
        ({"model": "l4", "mig": "1g.5gb"}, "no Multi-Instance GPU support"),
        ({"generation": "v5e", "topology": "3x3"}, "not offered for TPU v5e"),
    ],
)
@pytest.mark.parametrize("reader", READERS)
def test_a_bad_mapping_gets_the_hardwares_own_error(reader, data, match) -> None:
    with pytest.raises(SpecError, match=match):
        READERS[reader][1](data)


@pytest.mark.parametrize("value", ["h100", 8, ["h100"]])
@pytest.mark.parametrize("reader", READERS)
def test_what_is_no_hardware_is_refused_naming_the_field(reader, value) -> None:
    field, read = READERS[reader]
    with pytest.raises(SpecError) as caught:
        read(value)
    assert str(caught.value).startswith(f"{field}={value!r} is not an Accelerator or a TpuSlice")
    assert caught.value.field == field
    assert "TpuSlice('v5e', '4x4')" in caught.value.fix


def test_things_other_than_mappings_pass_through_for_the_field_to_judge() -> None:
    h100 = Accelerator("h100", count=8)
    assert hardware_from_data(h100) is h100
    assert hardware_from_data(None) is None
    assert hardware_from_data("h100") == "h100"


def test_the_kind_of_a_hardware_mapping_is_decided_in_one_place() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py")
        if path.relative_to(PACKAGE).as_posix() != "hardware/choice.py"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "TpuSlice if" in line or '"generation" in' in line
    ]
    assert found == []
