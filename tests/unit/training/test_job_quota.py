"""What a job asks of the project's quotas at once: whole machines' GPUs, every TPU chip,
one ask per accepted mode, nothing for CPU jobs and reservations."""

from __future__ import annotations

from gkeml_sdk import Accelerator, CpuMachine, TpuSlice, TrainingJob
from gkeml_sdk.training.job_quota import job_quota_asks


def _job(**kw: object) -> TrainingJob:
    return TrainingJob(name="j", command=["x"], **kw)  # type: ignore[arg-type]


def test_gpus_count_whole_machines_and_tpus_every_chip() -> None:
    # 3 pods of 4 H100 (Spot-only a3-highgpu-4g machines): the quota counts their 12 GPUs.
    (ask,) = job_quota_asks(_job(accelerator=Accelerator("h100", count=4), nodes=3, spot=True))
    assert (ask.key, ask.gpu, ask.preemptible, ask.units) == ("h100", True, True, 12)
    # Nine 1g.5gb MIG slices need two a2-highgpu-1g machines (7 slices each).
    (mig,) = job_quota_asks(_job(accelerator=Accelerator("a100-40gb", mig="1g.5gb"), nodes=9))
    assert mig.units == 2
    tpu = TpuSlice("v5e", "4x4", slices=2)
    (chips,) = job_quota_asks(_job(accelerator=tpu, spot=True))
    assert (chips.key, chips.gpu, chips.preemptible, chips.units) == ("v5e", False, True, 32)


def test_one_ask_per_mode_and_none_without_quota_to_take() -> None:
    order = job_quota_asks(_job(accelerator=Accelerator("l4"), capacity=["spot", "standard"]))
    assert [(a.name, a.preemptible) for a in order] == [("job 'j' (spot)", True),
                                                        ("job 'j' (standard)", False)]  # fmt: skip
    assert job_quota_asks(_job(accelerator=Accelerator("h100", count=8), reservation="r")) == []
    assert job_quota_asks(_job(accelerator=CpuMachine("h4d-highmem-192"))) == []
    assert job_quota_asks(_job()) == []
