"""The environment contract as container env entries (names: `catalog.contract`)."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.catalog import contract as c
from gkeml_sdk.catalog.contract import REPLICATED_JOB
from gkeml_sdk.catalog.kueue import (
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOB_INDEX_FAILURE_COUNT_ANNOTATION,
    JOBSET_JOB_INDEX_LABEL,
    JOBSET_REPLICAS_LABEL,
    JOBSET_RESTART_ATTEMPT_LABEL,
)
from gkeml_sdk.spec.job import TrainingJob
from gkeml_sdk.spec.tpu import TpuSlice

RUN_ID_LABEL = "gkeml.dev/run-id"
ATTEMPT_LABEL = "gkeml.dev/attempt"
CONTAINER = "trainer"


def attempt_name(run: str, attempt: int) -> str:
    """Deterministic object name of an attempt of run `run`, so a retried or restarted client
    can never create the same attempt twice. Run names may not contain `--` (the spec refuses
    it), so no attempt of one run can carry the name of another run or of its attempts.

    Example:
        >>> attempt_name("llama-ft", 1), attempt_name("llama-ft", 2)
        ('llama-ft', 'llama-ft--r2')
    """
    return run if attempt == 1 else f"{run}{c.ATTEMPT_SEPARATOR}r{attempt}"


def sdk_labels() -> dict[str, str]:
    """Labels that mark every top-level object gkeml creates, with the SDK version."""
    from gkeml_sdk.version import __version__

    return {"app.kubernetes.io/managed-by": "gkeml", "gkeml.dev/sdk-version": __version__}


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
    if isinstance(job.accelerator, TpuSlice):
        env += _tpu_env(job, job.accelerator, rank, attempt)
    return env


def _tpu_env(job: TrainingJob, tpu: TpuSlice, rank: str, attempt: int) -> list[dict[str, Any]]:
    env = [{"name": c.TPU_WORKER_ID, **_field(rank)}]
    if tpu.slices == 1:
        name = attempt_name(job.name, attempt)
        hosts = ",".join(f"{name}-{REPLICATED_JOB}-0-{i}.{name}" for i in range(tpu.hosts))
        env.append(_value(c.TPU_WORKER_HOSTNAMES, hosts))
    else:
        env += [
            _value(c.MEGASCALE_COORDINATOR_ADDRESS, coordinator_host(job, attempt)),
            {
                "name": c.MEGASCALE_NUM_SLICES,
                **_field(f"metadata.labels['{JOBSET_REPLICAS_LABEL}']"),
            },
            {
                "name": c.MEGASCALE_SLICE_ID,
                **_field(f"metadata.labels['{JOBSET_JOB_INDEX_LABEL}']"),
            },
        ]
    return env


def _value(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def _field(path: str) -> dict[str, Any]:
    return {"valueFrom": {"fieldRef": {"fieldPath": path}}}
