"""The environment contract as container env entries (names: `core.environment`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from gkeml_sdk.core import environment as c
from gkeml_sdk.core.environment import REPLICATED_JOB
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL, attempt_name
from gkeml_sdk.errors import SpecError
from gkeml_sdk.scheduling.kueue import (
    JOB_COMPLETION_INDEX_ANNOTATION,
    JOBSET_JOB_INDEX_LABEL,
    JOBSET_REPLICAS_LABEL,
)
from gkeml_sdk.training.frameworks import preset_command

if TYPE_CHECKING:
    from gkeml_sdk.core.environment import WorkerValue
    from gkeml_sdk.training.fields import TrainingJobFields

CONTAINER = "trainer"


def run_labels(job: TrainingJobFields, attempt: int) -> dict[str, str]:
    """Labels that mark every object and pod of one attempt of a run."""
    return {RUN_ID_LABEL: job.name, ATTEMPT_LABEL: str(attempt)}


def coordinator_host(job: TrainingJobFields, attempt: int = 1) -> str:
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


def contract_env(
    job: TrainingJobFields, checkpoint_path: str, attempt: int = 1
) -> list[dict[str, Any]]:
    """Env entries every process of `job` gets on GKE; the launcher adds the ones it computes
    (`core.environment.LAUNCHER_SETS`).

    Example:
        >>> from gkeml_sdk import TrainingJob, TpuSlice
        >>> env = contract_env(TrainingJob(name="ms", command=["x"],
        ...                    accelerator=TpuSlice("v5e", "4x4", slices=2)), "/ckpt")
        >>> {e["name"]: e.get("value") for e in env}["GKEML_PODS_PER_JOB"]
        '4'
    """
    host = coordinator_host(job, attempt)
    index = f"metadata.annotations['{JOB_COMPLETION_INDEX_ANNOTATION}']"
    job_index = (
        _field(f"metadata.labels['{JOBSET_JOB_INDEX_LABEL}']")
        if job.uses_jobset
        else {"value": "0"}
    )
    env: list[dict[str, Any]] = [
        _value(c.MASTER_ADDR, host),
        _value(c.MASTER_PORT, str(c.DEFAULT_MASTER_PORT)),
        _value(c.NNODES, str(job.nodes)),
        _value(c.NPROC_PER_NODE, str(job.procs_per_node)),
        _value(c.WORLD_SIZE, str(job.nodes * job.procs_per_node)),
        _value(c.JAX_COORDINATOR_ADDRESS, f"{host}:{c.JAX_COORDINATOR_PORT}"),
        _value(c.JAX_NUM_PROCESSES, str(job.nodes)),
        {"name": c.RUN_ID, **_field(f"metadata.labels['{RUN_ID_LABEL}']")},
        _value(c.CHECKPOINT_DIR, checkpoint_path),
        _value(c.BACKEND, "gke"),
        {"name": c.START_ID, **_field("metadata.uid")},
        {"name": c.JOB_INDEX, **job_index},
        {"name": c.POD_INDEX, **_field(index)},
        _value(c.PODS_PER_JOB, str(job.nodes // job.hardware.slices)),
    ]
    for name, carries in job.hardware.worker_env():
        env.append({"name": name, **_WORKER_VALUES[carries](job, index, attempt)})
    return env


def launcher_command(job: TrainingJobFields) -> tuple[list[str], list[str]]:
    """The container's command and args: the launcher, the framework preset's launcher
    (`training.frameworks`), then the job's command and args with `$$` doubled, so that
    Kubernetes hands them to the launcher as written and the launcher expands what it computes
    as Kubernetes would.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> command, args = launcher_command(TrainingJob(name="a", command=["echo"],
        ...                                  args=["$(NODE_RANK)", "$$5"]))
        >>> command[:2], command[3:], args
        (['python3', '-c'], ['echo'], ['$(NODE_RANK)', '$$$$5'])
    """
    if not job.command:
        raise SpecError(
            f"job {job.name!r} has no command",
            rule="gkeml starts the command through its launcher, which sets NODE_RANK, "
            "JAX_PROCESS_ID and GKEML_RESTART_ATTEMPT; it cannot wrap an image's entrypoint",
            fix="command=[...] (the image's entrypoint and its arguments)",
            field="command",
        )
    program = preset_command(job, [_escaped(word) for word in job.command])
    command = [c.LAUNCHER_PYTHON, "-c", launcher_source(), *program]
    return command, [_escaped(arg) for arg in job.args]


@cache
def launcher_source() -> str:
    from gkeml_sdk.training import launcher

    # Without the module docstring: it explains the launcher to readers of this repository.
    source = inspect.getsource(launcher)
    return source[source.index("from __future__") :]


def _escaped(arg: str) -> str:
    return arg.replace("$$", "$$$$")


def _slice_hosts(job: TrainingJobFields, rank: str, attempt: int) -> dict[str, Any]:
    # JobSet hostnames of the pods of this pod's slice: Kubernetes expands the job index
    # declared before this variable.
    name = attempt_name(job.name, attempt)
    hosts = job.nodes // job.hardware.slices
    slice_index = f"$({c.JOB_INDEX})" if job.hardware.slices > 1 else "0"
    return {
        "value": ",".join(f"{name}-{REPLICATED_JOB}-{slice_index}-{i}.{name}" for i in range(hosts))
    }


# How a pod learns each value the hardware's variables carry (core.environment.WorkerValue).
_WORKER_VALUES: dict[WorkerValue, Callable[[TrainingJobFields, str, int], dict[str, Any]]] = {
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
