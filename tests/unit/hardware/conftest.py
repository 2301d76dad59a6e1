"""Fake catalog rows (tests/unit/hardware): a GPU of another vendor and a TPU generation whose
runtime listens elsewhere, so a test sees every builder read the row, not a literal."""

import pytest

from gkeml_sdk.hardware import gpus, tpus
from gkeml_sdk.hardware.gpu_row import MachineType
from gkeml_sdk.hardware.gpus import GpuModel
from gkeml_sdk.hardware.tpus import TpuGeneration


@pytest.fixture
def new_gpu(monkeypatch):
    """A copy of the GPU catalog with one more row: a future GPU of another vendor."""
    row = GpuModel(
        "z900",
        "acme-z900",
        "ACME Z900",
        192,
        (MachineType("z9-highgpu-4g", 4), MachineType("z9-highgpu-8g", 8)),
        resource="acme.com/gpu",
        selector_label="acme.com/accelerator",
        taint_key="acme.com/gpu",
        shared_memory=False,
        compute_capability=10.0,
    )
    monkeypatch.setattr(gpus, "GPUS", (*gpus.GPUS, row))
    monkeypatch.setattr(gpus, "_BY_NAME", {**gpus._BY_NAME, row.key: row, row.label: row})
    return row


@pytest.fixture
def new_tpu(monkeypatch):
    """A copy of the TPU catalog with one more generation, whose runtime listens elsewhere."""
    row = TpuGeneration(
        "v9",
        "tpu-v9-slice",
        "TPU v9",
        2,
        (("2x2", "ct9-standard-4t", 4),),
        "ct9-standard-4t",
        ("4x4", "4x8"),
        32,
        64,
        ports=(("tpu-ici", 9471),),
    )
    monkeypatch.setattr(tpus, "TPUS", (*tpus.TPUS, row))
    monkeypatch.setattr(tpus, "_BY_NAME", {**tpus._BY_NAME, row.key: row, row.label: row})
    return row
