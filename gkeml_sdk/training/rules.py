"""The GKE and Kueue rules a `TrainingJob` must meet, checked at construction
(`TrainingJob` calls `check_job` from its validator)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.credentials import check_argv, check_texts
from gkeml_sdk.core.environment import ATTEMPT_SEPARATOR
from gkeml_sdk.core.model import DNS1123_LABEL, DNS1123_SUBDOMAIN, fail
from gkeml_sdk.core.quantity import check_quantity
from gkeml_sdk.core.rules import (
    check_env_name,
    check_int32,
    check_labels,
    check_name,
    check_plain_env,
    check_run_name,
    run_name_limit,
)
from gkeml_sdk.errors import SpecError
from gkeml_sdk.scheduling import spot
from gkeml_sdk.scheduling.capacity_order import check_capacity_order
from gkeml_sdk.scheduling.placement import check_placement
from gkeml_sdk.scheduling.rules import check_provisioning_mode
from gkeml_sdk.training.record_size import check_record_size
from gkeml_sdk.training.secret_env import check_secret_env

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields

# JobSet names its child Jobs `<name>-node-<i>` and pods `<job>-<j>-<suffix>`; both must stay
# within 63 characters, which leaves 40 for the job name.
MAX_NAME_LENGTH = 40


def check_job(job: TrainingJobFields) -> None:
    """Every GKE and Kueue rule a training job must meet; the first broken one raises."""
    if ATTEMPT_SEPARATOR in job.name:
        raise fail(
            f"name={job.name!r} contains {ATTEMPT_SEPARATOR!r}",
            rule=f"gkeml names resubmission attempts '<name>{ATTEMPT_SEPARATOR}r<k>', so run "
            f"names may not contain {ATTEMPT_SEPARATOR!r}",
            fix=f"name={job.name.replace(ATTEMPT_SEPARATOR, '-')!r}",
        )
    check_name("namespace", job.namespace, DNS1123_LABEL, 63)
    check_name("queue", job.queue, DNS1123_SUBDOMAIN, 63)
    if job.priority is not None:
        check_name("priority", job.priority, DNS1123_SUBDOMAIN, 253)
    if job.nodes < 1:
        raise fail(f"nodes={job.nodes}", rule="a job runs on at least one node", fix="nodes=1")
    if job.procs_per_node < 1:
        raise fail(
            f"procs_per_node={job.procs_per_node}",
            rule="each node runs at least one process",
            fix="procs_per_node=1",
        )
    if job.max_restarts < 0:
        raise fail(
            f"max_restarts={job.max_restarts}",
            rule="max_restarts counts failures of user code that may be retried",
            fix="max_restarts=0 (fail on the first user-code failure) or more",
        )
    if job.max_runtime is not None and job.max_runtime < 1:
        raise fail(
            f"max_runtime={job.max_runtime}",
            rule="Kueue's maximum execution time is a positive number of seconds",
            fix="max_runtime='2h' or leave it unset",
        )
    _check_fixed_hosts(job)
    _check_names_and_resources(job)
    _check_spot(job)
    check_provisioning_mode(job)
    check_capacity_order(job)
    check_placement(job)
    _check_env_and_labels(job)
    if job.checkpoint_dir is not None:
        from gkeml_sdk.storage.checkpoints import checkpoint_volume, parse_checkpoint_dir

        location = parse_checkpoint_dir(job.checkpoint_dir)
        if location.kind == "gcs":
            checkpoint_volume(location)  # the bucket name is checked as any mounted bucket's
    if job.volumes:
        from gkeml_sdk.storage.rules import check_volumes

        check_volumes(job.volumes, pods=job.nodes, env=job.env)
    if job.workdir is not None or job.code_bucket is not None or job.requirements is not None:
        from gkeml_sdk.training.workdir_job import check_workdir_fields

        check_workdir_fields(job)
    if job.files:
        from gkeml_sdk.training.code import check_files

        check_files(job.files)
    check_record_size(job)


def checkpoint_problem(
    job: TrainingJobFields, resubmits: bool = False, preempted: str = ""
) -> SpecError | None:
    """Why `job`'s checkpoints would not survive what its pods may go through, or None.

    A job can lose its pods when it runs on Spot or flex-start/queued capacity, when
    `max_restarts` > 0 lets a failed gang or index restart, when a RetryPolicy may resubmit
    it (`resubmits`), or when its queue lets Kueue preempt it (`preempted`: why, as the
    cluster's ClusterQueues say). Its checkpoints then need storage that outlives the pod,
    unless it says it keeps none (`stateless=True`). The cluster backend refuses such a job at
    submit; `compile()` lists the same text in its notes.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="ft", command=["x"], spot=True)
        >>> print(checkpoint_problem(job).what)
        job 'ft' can lose its pods (spot=True) but keeps its checkpoints in an emptyDir
        >>> checkpoint_problem(job.with_changes(checkpoint_dir="gs://my-bucket/ft")) is None
        True
    """
    from gkeml_sdk.storage.checkpoints import DURABLE_STORAGE, durable_volume

    if job.stateless or durable_volume(job.checkpoint_dir, job.volumes) is not None:
        return None
    risks = [
        *(["spot=True"] if job.spot else []),
        *([f"provisioning={job.provisioning!r}"] if job.provisioning != "standard" else []),
        *([f"max_restarts={job.max_restarts}"] if job.max_restarts > 0 else []),
        *(["a RetryPolicy that resubmits it"] if resubmits else []),
        *([preempted] if preempted else []),
    ]
    if not risks:
        return None
    where = (
        "an emptyDir"
        if job.checkpoint_dir is None
        else f"{job.checkpoint_dir!r}, which is on no writable volume of the pod"
    )
    return fail(
        f"job {job.name!r} can lose its pods ({', '.join(risks)}) but keeps its "
        f"checkpoints in {where}",
        rule="a preempted, restarted or resubmitted job starts in new pods, and a new pod "
        f"finds GKEML_CHECKPOINT_DIR empty unless it is on {DURABLE_STORAGE} "
        "(docs/environment.md, What survives what)",
        fix="checkpoint_dir='gs://BUCKET/PATH' (Cloud Storage FUSE), "
        "checkpoint_dir='pvc://CLAIM/PATH' (a ReadWriteMany claim: Filestore, Parallelstore, "
        "Lustre; or a Hyperdisk claim for one node), or a path under a writable "
        "volume of volumes=[...]; or stateless=True when the job keeps no state",
        field="checkpoint_dir",
    )


def _check_fixed_hosts(job: TrainingJobFields) -> None:
    hosts = job.hardware.fixed_pods
    if hosts is None:
        return
    tpu = job.accelerator
    if job.nodes != hosts:
        raise fail(
            f"nodes={job.nodes} but {tpu} has {hosts} host(s)",
            rule="a TPU slice runs one pod per VM; the node count is fixed by the topology",
            fix=f"nodes={hosts} or leave nodes unset",
            field="nodes",
        )
    if hosts > 1 and not job.gang:
        raise fail(
            f"gang=False with multi-host {tpu}",
            rule="a multi-host TPU slice is provisioned and scheduled all-or-nothing",
            fix="gang=True (the default for multi-host slices)",
            field="gang",
        )


def _check_names_and_resources(job: TrainingJobFields) -> None:
    limit = MAX_NAME_LENGTH
    if job.uses_jobset:
        replicas = job.hardware.slices
        limit = min(limit, run_name_limit(replicas, job.nodes // replicas))
    check_run_name(job.name, limit)
    check_name("service_account", job.service_account, DNS1123_SUBDOMAIN, 253)
    check_quantity("cpu", job.cpu)
    check_quantity("memory", job.memory)
    # Flex-start and queued capacity is not on-demand either.
    job.hardware.check_provisioning(spot=job.spot or job.provisioning != "standard")
    for field in ("nodes", "max_restarts", "max_runtime", "termination_grace_seconds"):
        check_int32(field, getattr(job, field))


def _check_spot(job: TrainingJobFields) -> None:
    grace = job.termination_grace_seconds
    if grace is None:
        return
    if grace < 0:
        raise fail(f"termination_grace_seconds={grace}", fix="a value >= 0")
    if job.spot and grace > spot.SPOT_MAX_GRACE_SECONDS:
        raise fail(
            f"termination_grace_seconds={grace} on Spot",
            rule=f"Spot nodes give pods {spot.SPOT_DEFAULT_GRACE_SECONDS} s by default and "
            f"at most {spot.SPOT_MAX_GRACE_SECONDS} s when the node pool is configured",
            fix=f"termination_grace_seconds<={spot.SPOT_MAX_GRACE_SECONDS}; checkpoint "
            "periodically instead of at shutdown",
            field="termination_grace_seconds",
        )


def _check_env_and_labels(job: TrainingJobFields) -> None:
    from gkeml_sdk.core.environment import RESERVED_ENV

    for key in job.env:
        check_env_name(key)
        if key in RESERVED_ENV:
            raise fail(
                f"env {key!r} is set by gkeml for every process",
                rule="the environment contract fixes ranks, coordinator and checkpoint paths",
                fix=f"remove {key} from env; reserved names: {', '.join(sorted(RESERVED_ENV))}",
                field="env",
            )
    check_secret_env(job.secret_env, job.env)
    check_plain_env(job.env)
    check_argv(job.command or [], "command")
    check_argv(job.args, "args")
    check_texts(job.files.items(), "files")
    check_labels(job.labels, job.annotations)
