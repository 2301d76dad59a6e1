"""Records as gkeml stored them in the cluster before records carried a schema, pasted from
what the code at 7635333 wrote, so the tests prove such records keep loading."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord, RunRecord
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus, Transition
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.training.model import TrainingJob

# RunRecord.to_configmap() at 7635333, before records carried a schema: a job with one code
# file, a retry policy, two attempts and two transitions.
UNVERSIONED_RUN_RECORD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "ft-gkeml-run",
        "namespace": "ml",
        "labels": {
            "gkeml.dev/run-record": "true",
            "gkeml.dev/run-id": "ft",
            "app.kubernetes.io/managed-by": "gkeml",
            "gkeml.dev/sdk-version": "0.1.0",
        },
    },
    "data": {
        "spec.yaml": "name: ft\nimage: ghcr.io/acme/train:1\ncommand:\n- python\n- train.py\n"
        "nodes: 1\nprocs_per_node: 1\ngang: false\nnamespace: ml\n",
        "files.json": '["train.py"]',
        "code.configmap": "ft-code",
        "retry.yaml": "max_resubmits: 3\n",
        "attempts.json": '[{"attempt": 1, "name": "ft", "spot": true, "outcome": "Failed", '
        '"uid": "uid-1"}, {"attempt": 2, "name": "ft--r2", "spot": false, "outcome": "", '
        '"uid": "uid-2"}]',
        "history.json": '[{"state": "Queued", "reason": "Pending", "message": "waiting for '
        'quota", "cause": null, "attempt": 1, "at": 0.0, "detail": ""}, {"state": "Failed", '
        '"reason": "NodeLost", "message": "spot reclaimed", "cause": "Infrastructure", '
        '"attempt": 1, "at": 12.5, "detail": "node n1"}]',
        "submitted_at": "1767225600.5",
        "cancelled": "false",
    },
}
CODE = {"train.py": "print('hi')\n"}  # the data of its code ConfigMap `ft-code`
# RunRecord.to_configmap() at ba33622 (schema 3, everything in the data, the code files with
# it) of `expected_run_record()`.
SCHEMA_3_RUN_RECORD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": UNVERSIONED_RUN_RECORD["metadata"],
    "data": {
        "schema": "3",
        "spec.yaml": "name: ft\nimage: ghcr.io/acme/train:1\ncommand:\n- python\n- train.py\n"
        "nodes: 1\nprocs_per_node: 1\ngang: false\nnamespace: ml\n",
        "files.json": '["train.py"]',
        "code.configmap": "ft-gkeml-run",
        "retry.yaml": "max_resubmits: 3\n",
        "attempts.json": '[{"attempt": 1, "name": "ft", "spot": true, "outcome": "Failed", '
        '"uid": "uid-1", "counters": {}}, {"attempt": 2, "name": "ft--r2", "spot": false, '
        '"outcome": "", "uid": "uid-2", "counters": {}}]',
        "history.json": '[{"state": "Queued", "reason": "Pending", "message": "waiting for '
        'quota", "cause": null, "attempt": 1, "at": 0.0, "detail": "", "key": ""}, {"state": '
        '"Failed", "reason": "NodeLost", "message": "spot reclaimed", "cause": '
        '"Infrastructure", "attempt": 1, "at": 12.5, "detail": "node n1", "key": ""}]',
        "submitted_at": "1767225600.5",
        "cancelled": "false",
        "file.train.py": "print('hi')\n",
    },
}
# TenantStatus.data() at 7635333.
UNVERSIONED_TENANT_STATUS = {
    "failover_count": "2",
    "last_failover": "2026-01-01T00:00:00Z",
    "failing_over": "llama",
    "ready_seen": "llama,qwen",
    "allocations": '[{"model": "llama", "pod": "p"}]',
}


def expected_run_record() -> RunRecord:
    job = TrainingJob(
        name="ft",
        image="ghcr.io/acme/train:1",
        command=["python", "train.py"],
        namespace="ml",
        files=CODE,
    )
    return RunRecord(
        job=job,
        submitted_at=1767225600.5,
        retry=RetryPolicy(max_resubmits=3),
        attempts=(
            AttemptRecord(1, "ft", True, "Failed", "uid-1"),
            AttemptRecord(2, "ft--r2", False, "", "uid-2"),
        ),
        history=(
            Transition(RunStatus(RunState.QUEUED, "Pending", "waiting for quota"), 1, 0.0, ""),
            Transition(
                RunStatus(
                    RunState.FAILED, "NodeLost", "spot reclaimed", FailureCause.INFRASTRUCTURE
                ),
                1,
                12.5,
                "node n1",
            ),
        ),
    )
