"""Secret env compiles to `valueFrom.secretKeyRef` on the trainer container; the run record
keeps the reference only; plain env that looks like a secret gets a note."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, SecretRef, SpecError, TpuSlice, TrainingJob
from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord, RunRecord
from tests.record_fields import record_field
from tests.schemas import validate_object

REFS = {"WANDB_API_KEY": SecretRef("wandb", "api-key"), "HF_TOKEN": SecretRef("hf", "token")}


def job(**kwargs: object) -> TrainingJob:
    return TrainingJob(**{"name": "ft", "image": "img", "command": ["python", "t.py"], **kwargs})


def trainer(main: dict) -> dict:
    if main["kind"] == "Job":
        spec = main["spec"]["template"]["spec"]
    else:
        spec = main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    (container,) = [c for c in spec["containers"] if c["name"] == "trainer"]
    return container


@pytest.mark.parametrize(
    "shape",
    [
        {},
        {"nodes": 2},
        {"accelerator": Accelerator("h100", count=8), "nodes": 2},
        {"accelerator": TpuSlice("v5e", "4x4")},
    ],
)
def test_secret_env_is_a_secret_key_ref_on_the_trainer(shape: dict) -> None:
    m = job(secret_env=REFS, env={"LR": "0.1"}, **shape).compile()
    for obj in [*m.objects, m.workload]:
        validate_object(obj)
    env = {e["name"]: e for e in trainer(m.main)["env"]}
    assert env["WANDB_API_KEY"] == {
        "name": "WANDB_API_KEY",
        "valueFrom": {"secretKeyRef": {"name": "wandb", "key": "api-key"}},
    }
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "hf", "key": "token"}
    assert env["LR"] == {"name": "LR", "value": "0.1"}
    assert len(env) == len(trainer(m.main)["env"])  # every name once


def test_the_run_record_keeps_the_reference() -> None:
    first = AttemptRecord(1, "ft", False)
    record = RunRecord(job=job(secret_env=REFS), submitted_at=1.0, attempts=(first,))
    cm = record.to_configmap()
    validate_object(cm)
    spec = record_field(cm, "spec.yaml")
    assert "wandb" in spec and "api-key" in spec
    assert RunRecord.from_configmap(cm) == record


@pytest.mark.parametrize(
    "name", ["HF_TOKEN", "WANDB_API_KEY", "db_password", "AWS_SECRET_ACCESS_KEY", "GCP_CREDENTIALS"]
)
def test_plain_env_that_looks_like_a_secret_gets_a_note_without_its_value(name: str) -> None:
    # A short value under a secret-like name is noted; one that looks like a credential is
    # refused (core.rules.check_plain_env, tests/unit/test_bad_input.py).
    m = job(env={name: "s3cr3t", "LR": "0.1"}).compile()
    notes = [n for n in m.notes if name in n]
    assert len(notes) == 1 and "secret_env" in notes[0]
    assert not any("s3cr3t" in n for n in m.notes)
    with pytest.raises(SpecError, match=f"env {name} holds what looks like a credential"):
        job(env={name: "s3cr3t-value-0123", "LR": "0.1"})
    assert not any("LR" in n for n in m.notes)


def test_secret_env_and_ordinary_env_get_no_secret_note() -> None:
    m = job(env={"LR": "0.1", "BATCH": "8"}, secret_env=REFS).compile()
    assert not any("looks like a secret" in n for n in m.notes)
