"""The environment contract as container env entries (names: `core.environment`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gkeml_sdk.core import environment as c
from gkeml_sdk.core.environment import REPLICATED_JOB, WorkerValue
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL, attempt_name
from gkeml_sdk.scheduling.kueue import (
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOBSET_JOB_INDEX_LABEL,
    JOBSET_REPLICAS_LABEL,
    JOBSET_RESTART_ATTEMPT_LABEL,
)

if TYPE_CHECKING:
    from gkeml_sdk.training.model import TrainingJob

CONTAINER = "trainer"


def run_labels(job: TrainingJob, attempt: int) -> dict[str, str]:
    """Labels that mark every object and pod of one attempt of a run."""
    return {RUN_ID_LABEL: job.name, ATTEMPT_LABEL: str(attempt)}


def coordinator_host(job: TrainingJob, attempt: int = 1) -> str:
    """DNS name of the rank-0 pod: JobSet hostnames are `<jobset>-<rjob>-<job>-<pod>.<jobset>`.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> coordinator_host(TrainingJob(name="ft", nodes=2, command=["x"]))
        'ft-node-0-0.ft'
    """
    if not job.uses_jobset:
        return "localhost"
    name = attempt_name(job.name, attempt)
    return f"{name}-{REPLICATED_JOB}-0-0.{name}"


def contract_env(job: TrainingJob, checkpoint_path: str, attempt: int = 1) -> list[dict[str, Any]]:
    """Env entries every process of `job` gets on GKE."""
    host = coordinator_host(job, attempt)
    rank = f"metadata.annotations['{JOB_COMPLETION_INDEX_ANNOTATION}']"
    attempt_key = (
        f"metadata.labels['{JOBSET_RESTART_ATTEMPT_LABEL}']"
        if job.uses_jobset
        else f"metadata.annotations['{JOB_INDEX_FAILURE_COUNT_ANNOTATION}']"
    )
    env: list[dict[str, Any]] = [
        _value(c.MASTER_ADDR, host),
        _value(c.MASTER_PORT, str(c.DEFAULT_MASTER_PORT)),
        _value(c.NNODES, str(job.nodes)),
        {"name": c.NODE_RANK, **_field(rank)},
        _value(c.NPROC_PER_NODE, str(job.procs_per_node)),
        _value(c.WORLD_SIZE, str(job.nodes * job.procs_per_node)),
        _value(c.JAX_COORDINATOR_ADDRESS, f"{host}:{c.JAX_COORDINATOR_PORT}"),
        _value(c.JAX_NUM_PROCESSES, str(job.nodes)),
        {"name": c.JAX_PROCESS_ID, **_field(rank)},
        {"name": c.RUN_ID, **_field(f"metadata.labels['{RUN_ID_LABEL}']")},
        {"name": c.RESTART_ATTEMPT, **_field(attempt_key)},
        _value(c.CHECKPOINT_DIR, checkpoint_path),
        _value(c.BACKEND, "gke"),
    ]
    for name, carries in job.hardware.worker_env():
        env.append({"name": name, **_WORKER_VALUES[carries](job, rank, attempt)})
    return env


def _slice_hosts(job: TrainingJob, rank: str, attempt: int) -> dict[str, Any]:
    # JobSet hostnames of the first slice's pods (its only one: multislice uses megascale).
    name = attempt_name(job.name, attempt)
    hosts = job.nodes // job.hardware.slices
    return {"value": ",".join(f"{name}-{REPLICATED_JOB}-0-{i}.{name}" for i in range(hosts))}


# How a pod learns each value the hardware's variables carry (core.environment.WorkerValue).
_WORKER_VALUES: dict[WorkerValue, Callable[[TrainingJob, str, int], dict[str, Any]]] = {
    "rank": lambda job, rank, attempt: _field(rank),
    "slice_hosts": _slice_hosts,
    "coordinator": lambda job, rank, attempt: {"value": coordinator_host(job, attempt)},
    "slices": lambda job, rank, attempt: _field(f"metadata.labels['{JOBSET_REPLICAS_LABEL}']"),
    "slice_index": lambda job, rank, attempt: _field(
        f"metadata.labels['{JOBSET_JOB_INDEX_LABEL}']"
    ),
}


def _value(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def _field(path: str) -> dict[str, Any]:
    return {"valueFrom": {"fieldRef": {"fieldPath": path}}}
