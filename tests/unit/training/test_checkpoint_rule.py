"""A job that can lose its pods keeps its checkpoints on durable storage, or says it keeps no
state: refused at a cluster submit, a note in render, accepted locally."""

from __future__ import annotations

import pytest

from gkeml_sdk import (
    Accelerator,
    Client,
    LocalSettings,
    RetryPolicy,
    RunState,
    SpecError,
    TrainingJob,
)
from gkeml_sdk.storage.disks import HyperdiskML, Parallelstore
from gkeml_sdk.storage.volumes import GcsFuse, Pvc
from gkeml_sdk.training.rules import checkpoint_problem

RISKS = {
    "spot": {"spot": True},
    "flex-start": {"provisioning": "flex-start", "accelerator": Accelerator("h100", count=8)},
    "queued": {"provisioning": "queued", "accelerator": Accelerator("h100", count=8)},
    "max_restarts": {"max_restarts": 1},
}
DURABLE = {
    "gcs": {"checkpoint_dir": "gs://ckpt-bucket/run"},
    "pvc": {"checkpoint_dir": "pvc://ckpt/run"},
    "path on a PVC": {"checkpoint_dir": "/data/ckpt", "volumes": [Pvc("shared", mount="/data")]},
    "path on a bucket": {
        "checkpoint_dir": "/mnt/b/ckpt",
        "volumes": [GcsFuse("ckpt-bucket", mount="/mnt/b")],
    },
    "Parallelstore": {
        "checkpoint_dir": "/scratch/ckpt",
        "volumes": [Parallelstore(pvc="scratch", mount="/scratch")],
    },
    "Hyperdisk": {
        "checkpoint_dir": "/disk",
        "volumes": [HyperdiskML(pvc="disk", mount="/disk", read_only_many=False)],
    },
}
LOST = {
    "emptyDir": {},
    "container file system": {"checkpoint_dir": "/tmp/ckpt"},
    "read-only volume": {
        "checkpoint_dir": "/data/ckpt",
        "volumes": [Pvc("shared", mount="/data", read_only=True)],
    },
    "path beside a volume": {"checkpoint_dir": "/database", "volumes": [Pvc("s", mount="/data")]},
}


def job(**fields) -> TrainingJob:
    return TrainingJob(name="ft", image="img", command=["python", "train.py"], **fields)


@pytest.mark.parametrize("risk", sorted(RISKS))
@pytest.mark.parametrize("storage", sorted(LOST))
def test_a_job_that_can_lose_its_pods_needs_durable_checkpoints(risk, storage):
    spec = job(**RISKS[risk], **LOST[storage])
    with pytest.raises(SpecError) as caught:
        spec.check_checkpoints()
    error = caught.value
    assert error.field == "checkpoint_dir" and "can lose its pods" in error.what
    for option in ("gs://BUCKET/PATH", "pvc://CLAIM/PATH", "Parallelstore", "Hyperdisk"):
        assert option in str(error)
    assert "stateless=True" in error.fix
    # render and --dry-run show the same text as a note.
    assert any(note.startswith(str(error)) for note in spec.compile().notes)
    spec.with_changes(stateless=True).check_checkpoints()


@pytest.mark.parametrize("storage", sorted(DURABLE))
def test_durable_storage_passes(storage):
    spec = job(spot=True, max_restarts=2, **DURABLE[storage])
    spec.check_checkpoints(RetryPolicy(max_resubmits=3))
    assert not any("can lose its pods" in note for note in spec.compile().notes)


def test_a_retry_policy_that_resubmits_is_a_risk_one_that_never_does_is_not():
    spec = job()
    assert checkpoint_problem(spec) is None
    spec.check_checkpoints(RetryPolicy(max_resubmits=0))
    with pytest.raises(SpecError, match="a RetryPolicy that resubmits it"):
        spec.check_checkpoints(RetryPolicy(max_resubmits=1))


def test_stateless_defaults_to_false_and_round_trips():
    assert job().stateless is False
    spec = job(spot=True, stateless=True)
    assert TrainingJob.from_yaml(spec.to_yaml()) == spec
    assert checkpoint_problem(spec) is None


def test_a_local_run_of_such_a_job_keeps_working(tmp_path):
    client = Client(local=LocalSettings(run_dir=tmp_path))
    spec = TrainingJob(name="spot", command=["python", "-c", "pass"], spot=True, max_restarts=1)
    assert checkpoint_problem(spec) is not None
    run = client.submit(spec, retry=RetryPolicy(max_resubmits=1))
    assert run.wait(timeout=60).state is RunState.SUCCEEDED
