"""The run record's size rule, checked against the API server's own ConfigMap limit: every job
`validate` accepts has a record the API server accepts, whatever its history grows to."""

from __future__ import annotations

import pytest

from gkeml_sdk import SpecError, TrainingJob
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    SPEC_ANNOTATION_MAX_BYTES,
    AttemptRecord,
    RunRecord,
)
from gkeml_sdk.core.apimachinery import CONFIG_MAP_MAX_SIZE, object_errors
from gkeml_sdk.core.environment import MAX_RESUBMITS, RECORD_HISTORY_MAX_BYTES
from gkeml_sdk.runs.handle import RunState, RunStatus, Transition
from tests.record_fields import record_field


def job(**changes: object) -> TrainingJob:
    return TrainingJob(**{"name": "big", "image": "img", "command": ["python", "t.py"], **changes})


def data_bytes(record: RunRecord) -> int:
    return sum(len(v.encode()) for v in record.to_configmap()["data"].values())


@pytest.mark.parametrize(
    "changes",
    [
        {"env": {f"V{i}": "x" * 100_000 for i in range(11)}},
        {"args": ["--prompt=" + "y" * 600_000, "--other=" + "z" * 400_000]},
        {
            "annotations": {"a": "x" * (128 * 1024), "b": "y" * (120 * 1024)},
            "command": ["python", "main.py"],
            "files": {"main.py": "z" * (700 * 1024)},
        },
    ],
)
def test_a_spec_whose_record_the_api_server_refuses_is_refused(changes: dict[str, object]) -> None:
    # Each was accepted before: the code allowance counted the files only.
    with pytest.raises(SpecError, match=r"the run record of 'big' would hold \d+ KiB"):
        job(**changes)


def largest_accepted_env() -> TrainingJob:
    low, high = 0, CONFIG_MAP_MAX_SIZE
    while high - low > 64:
        middle = (low + high) // 2
        try:
            job(env={"BIG": "x" * middle})
        except SpecError:
            high = middle
        else:
            low = middle
    return job(env={"BIG": "x" * low})


def test_the_largest_accepted_job_keeps_a_record_the_api_server_accepts() -> None:
    accepted = largest_accepted_env()
    # A run that went through 20,000 transitions (chaos, restarts): far beyond what fits.
    history = tuple(
        Transition(RunStatus(RunState.RUNNING, "Running", f"attempt {i}"), i, float(i))
        for i in range(1, 20_001)
    )
    first = (AttemptRecord(1, accepted.name, False),)  # every record holds its first attempt
    record = RunRecord(job=accepted, submitted_at=1.0, attempts=first, history=history)
    configmap = record.to_configmap()
    assert object_errors(configmap) == []  # ValidateConfigMap: data values <= 1 MiB
    assert data_bytes(record) <= CONFIG_MAP_MAX_SIZE
    kept = RunRecord.from_configmap(configmap).history
    assert 0 < len(kept) < len(history)
    assert kept[-1] == history[-1] and kept == history[-len(kept) :]  # the newest stay
    assert len(record_field(configmap, "history.json").encode()) <= RECORD_HISTORY_MAX_BYTES


def test_a_short_history_is_kept_whole() -> None:
    history = tuple(Transition(RunStatus(RunState.RUNNING, "Running"), 1, 0.5) for _ in range(3))
    first = (AttemptRecord(1, job().name, False),)
    record = RunRecord(job=job(), submitted_at=1.0, attempts=first, history=history)
    assert RunRecord.from_configmap(record.to_configmap()).history == history


def test_the_fullest_record_keeps_its_annotations_within_what_the_api_server_accepts() -> None:
    # A spec just small enough for the annotations, every resubmission a policy allows (each
    # attempt with its counters) and the history at its cap: the annotations' 256 KiB hold it.
    spec = job(env={"BIG": "x" * (SPEC_ANNOTATION_MAX_BYTES - 200)})
    attempts = tuple(
        AttemptRecord(i, spec.name if i == 1 else f"{spec.name}--r{i}", True, "Failed",
                      f"{i:08d}-0000-0000-0000-000000000000",
                      {"preemptions": 10**6, "disruptions": 10**6, "user_restarts": 10**6})
        for i in range(1, MAX_RESUBMITS + 2)
    )  # fmt: skip
    history = tuple(
        Transition(RunStatus(RunState.FAILED, "NodeLost", "x" * 200), i % 99 + 1, float(i))
        for i in range(5_000)
    )
    record = RunRecord(job=spec, submitted_at=1.0, attempts=attempts, history=history)
    configmap = record.to_configmap()
    assert "spec.yaml" not in configmap["data"]  # it went to the annotations
    assert object_errors(configmap) == []  # ValidateObjectMeta: annotations <= 256 KiB
    assert RunRecord.from_configmap(configmap).attempts == attempts
