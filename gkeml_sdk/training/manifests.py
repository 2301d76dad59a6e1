"""TrainingJob -> batch/v1 Job or JobSet, Kueue-managed and preemption-aware, plus the
Workload Kueue would derive from it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.environment import REPLICATED_JOB
from gkeml_sdk.core.labels import RUN_ID_LABEL, attempt_name, sdk_labels
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware.manifests import network_notes
from gkeml_sdk.hardware.pool_facts import CRITICAL_PODS_SHUTDOWN_SECONDS
from gkeml_sdk.scheduling import kueue
from gkeml_sdk.scheduling.placement import exclusive_label
from gkeml_sdk.scheduling.spot import SPOT_DEFAULT_GRACE_SECONDS, SPOT_MAX_GRACE_SECONDS
from gkeml_sdk.storage.checkpoints import checkpoint_volume, parse_checkpoint_dir
from gkeml_sdk.storage.volume_objects import volume_notes, volume_objects
from gkeml_sdk.training.bootstrap import bootstrap_jobset_rule, bootstrap_pod_rule, needs_bootstrap
from gkeml_sdk.training.code_configmap import code_config_map
from gkeml_sdk.training.contract_env import CONTAINER, run_labels
from gkeml_sdk.training.dra_claims import claim_objects, dra_notes
from gkeml_sdk.training.pod import pod_template
from gkeml_sdk.training.provisioning import provisioning_annotations, provisioning_notes
from gkeml_sdk.training.rules import checkpoint_problem
from gkeml_sdk.training.secret_env import secret_like_env_notes

if TYPE_CHECKING:
    from gkeml_sdk.storage.volume_base import VolumeBase
    from gkeml_sdk.training.fields import TrainingJobFields


def compile_training_job(job: TrainingJobFields, attempt: int = 1) -> Manifests:
    """Manifests for `job`: a JobSet when it is multi-node, gang or a multi-host TPU slice,
    otherwise a batch/v1 Job. Deterministic: equal specs give byte-identical YAML.
    Attempt k > 1 of a resubmitted run gets the name `<name>--r<k>`.

    Example:
        >>> from gkeml_sdk import TrainingJob, Accelerator
        >>> m = compile_training_job(TrainingJob(name="ft", image="img", command=["x"],
        ...                          accelerator=Accelerator("h100", count=8), nodes=2))
        >>> m.main["kind"], m.main["spec"]["suspend"]
        ('JobSet', True)
    """
    if not job.image:
        raise SpecError(
            f"job {job.name!r} has no image",
            rule="pods on GKE run a container image",
            fix="TrainingJob(..., image='us-docker.pkg.dev/PROJECT/REPO/IMAGE:TAG'), "
            "or run it with Client(backend='local')",
            field="image",
        )
    from gkeml_sdk.training.workdir_job import as_files

    job = as_files(job)  # no code bucket: a small workdir travels as the run record's files
    template = pod_template(job, attempt)
    metadata = _metadata(job, attempt)
    main = _jobset(job, template, metadata) if job.uses_jobset else _job(job, template, metadata)
    if job.multikueue:
        # The manager's JobSet/Job controllers leave it alone; MultiKueue runs it on a worker.
        main["spec"]["managedBy"] = kueue.MULTIKUEUE_CONTROLLER
    code = code_config_map(job)
    # The ConfigMap, the claims and the volumes' objects first: pods use them as soon as Kueue
    # admits them.
    objects = volume_objects(job.volumes, job.namespace, job.service_account)
    objects += [*([] if code is None else [code]), *claim_objects(job), main]
    # The Workload's pod template is built anew, not copied: no object is shared between the
    # two, and building is several times faster than copy.deepcopy.
    return Manifests(
        objects=objects,
        notes=_notes(job),
        workload=_workload(job, main, pod_template(job, attempt)),
    )


def _metadata(job: TrainingJobFields, attempt: int) -> Obj:
    labels = {kueue.QUEUE_LABEL: job.queue, **run_labels(job, attempt), **sdk_labels()}
    if job.priority:
        labels[kueue.PRIORITY_LABEL] = job.priority
    if job.max_runtime:
        labels[kueue.MAX_EXEC_TIME_LABEL] = str(job.max_runtime)
    metadata: Obj = {
        "name": attempt_name(job.name, attempt),
        "namespace": job.namespace,
        "labels": {**job.labels, **labels},
    }
    annotations = {**provisioning_annotations(job), **job.annotations}
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def _job(job: TrainingJobFields, template: Obj, metadata: Obj) -> Obj:
    spec: Obj = {
        # Kueue's webhook suspends it too; setting it closes the race when the webhook is slow.
        "suspend": True,
        "completions": 1,
        "parallelism": 1,
        "completionMode": "Indexed",
        # Per-index retries expose the attempt number as a pod annotation (GKEML_RESTART_ATTEMPT).
        "backoffLimitPerIndex": job.max_restarts,
        "podFailurePolicy": {"rules": _pod_rules(job)},
        "template": template,
    }
    return {"apiVersion": kinds.BATCH, "kind": "Job", "metadata": metadata, "spec": spec}


def _jobset(job: TrainingJobFields, template: Obj, metadata: Obj) -> Obj:
    hardware = job.hardware
    replicas = hardware.slices
    per_job = job.nodes // replicas
    job_spec: Obj = {
        "parallelism": per_job,
        "completions": per_job,
        "completionMode": "Indexed",
    }
    if job.gang:
        # Any failed pod fails its Job; the JobSet restarts the whole gang.
        job_spec["backoffLimit"] = 0
        job_spec["podFailurePolicy"] = {"rules": [*_pod_rules(job), _fail_on_user_exit()]}
        failure_policy: Obj = {
            "maxRestarts": job.max_restarts,
            "restartStrategy": "Recreate",
            "rules": [
                *_jobset_rules(job),
                {
                    "name": "userCodeFailure",
                    "action": "RestartJobSet",
                    "onJobFailureReasons": list(kueue.USER_CODE_JOB_FAILURE_REASONS),
                },
                {
                    # Pods that fail with no exit code of the trainer (kubelet admission
                    # errors, a failed init container) fail the same way every time: these
                    # restarts count, or the gang would restart forever.
                    "name": "failureWithoutExitCode",
                    "action": "RestartJobSet",
                    "onJobFailureReasons": list(kueue.OTHER_JOB_FAILURE_REASONS),
                },
            ],
        }
    else:
        # Independent workers: each index retries on its own budget; exhausting it fails all.
        job_spec["backoffLimitPerIndex"] = job.max_restarts
        job_spec["podFailurePolicy"] = {"rules": _pod_rules(job)}
        failure_policy = {
            "maxRestarts": 0,
            "rules": [
                *_jobset_rules(job),
                {
                    "name": "userCodeFailure",
                    "action": "FailJobSet",
                    "onJobFailureReasons": ["FailedIndexes", "MaxFailedIndexesExceeded"],
                },
            ],
        }
    job_spec["template"] = template
    replicated: Obj = {"name": REPLICATED_JOB, "replicas": replicas, "template": {"spec": job_spec}}
    exclusive = exclusive_label(job)
    if exclusive:
        # One slice per node pool: a multi-host slice is one node pool, and a Job whose pods
        # straddled two pools would span two slices (multislice: one Job per slice). The
        # placement may ask the same of a rack.
        metadata.setdefault("annotations", {})[kueue.JOBSET_EXCLUSIVE_TOPOLOGY] = exclusive
    spec: Obj = {
        "suspend": True,
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "successPolicy": {"operator": "All"},
        "failurePolicy": failure_policy,
        "replicatedJobs": [replicated],
    }
    return {"apiVersion": kinds.JOBSET, "kind": "JobSet", "metadata": metadata, "spec": spec}


def _pod_rules(job: TrainingJobFields) -> list[Obj]:
    # A workspace that cannot be prepared fails the Job at once: retrying installs the same
    # requirements from the same archive. The rule names the bootstrap container, which
    # Kubernetes refuses in a Job whose pods lack it.
    return [_ignore_disruptions(), *([bootstrap_pod_rule()] if needs_bootstrap(job) else [])]


def _jobset_rules(job: TrainingJobFields) -> list[Obj]:
    # First: the gang's rule for other PodFailurePolicy failures would restart it.
    return [bootstrap_jobset_rule()] if needs_bootstrap(job) else []


def _ignore_disruptions() -> Obj:
    # A pod that fails because its node went away (Spot reclaim, maintenance, eviction) is
    # replaced without spending any retry budget. Built per call: compiled objects are the
    # caller's to edit, so none may be shared with another compile.
    return {
        "action": "Ignore",
        "onPodConditions": [{"type": kueue.DISRUPTION_CONDITION, "status": "True"}],
    }


def _fail_on_user_exit() -> Obj:
    # A non-zero exit of user code fails the Job at once; the JobSet then decides on a restart.
    return {
        "action": "FailJob",
        "onExitCodes": {"containerName": CONTAINER, "operator": "NotIn", "values": [0]},
    }


def _workload(job: TrainingJobFields, main: Obj, template: Obj) -> Obj:
    """What Kueue builds from `main`: one PodSet per replicatedJob, or `main`."""
    pod_set_name = REPLICATED_JOB if main["kind"] == "JobSet" else "main"
    spec: Obj = {
        "queueName": job.queue,
        "podSets": [{"name": pod_set_name, "count": job.nodes, "template": template}],
    }
    if job.priority:
        spec["priorityClassRef"] = {
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": job.priority,
        }
    if job.max_runtime:
        spec["maximumExecutionTimeSeconds"] = job.max_runtime
    # The real name carries a hash of the job's UID, known only after creation
    # (kubernetes-sigs/kueue pkg/controller/jobframework/workload_names.go).
    name = f"{main['kind'].lower()}-{main['metadata']['name']}"
    return {
        "apiVersion": kinds.KUEUE,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": job.namespace, "labels": {RUN_ID_LABEL: job.name}},
        "spec": spec,
    }


def _notes(job: TrainingJobFields) -> tuple[str, ...]:
    notes = []
    problem = checkpoint_problem(job)
    if problem is not None:
        notes.append(f"{problem} (Client().submit refuses it on a cluster)")
    elif job.checkpoint_dir is None and not job.stateless:
        notes.append(
            "checkpoint_dir is not set: checkpoints go to an emptyDir that is lost when pods "
            "are recreated (preemption, gang restart); set checkpoint_dir='gs://BUCKET/PATH'"
        )
    grace = job.termination_grace_seconds
    if job.spot and grace is not None and grace > SPOT_DEFAULT_GRACE_SECONDS:
        notes.append(
            f"terminationGracePeriodSeconds={grace} has no effect on Spot nodes unless the node "
            f"pool extends graceful shutdown; GKE gives {SPOT_DEFAULT_GRACE_SECONDS} s by default "
            f"(NodePool(spot=True, shutdown_grace_seconds={SPOT_MAX_GRACE_SECONDS}) gives pods up "
            f"to {SPOT_MAX_GRACE_SECONDS - CRITICAL_PODS_SHUTDOWN_SECONDS} s)"
        )
    notes.extend(secret_like_env_notes(job))
    notes.extend(provisioning_notes(job))
    notes.extend(network_notes(job.network_choice))
    notes.extend(job.gpudirect_advice)
    notes.extend(job.hardware.notes())
    notes.extend(dra_notes(job))
    notes.extend(volume_notes(_mounted(job), job.namespace, job.service_account))
    return tuple(notes)


def _mounted(job: TrainingJobFields) -> list[VolumeBase]:
    location = parse_checkpoint_dir(job.checkpoint_dir) if job.checkpoint_dir else None
    bucket = [checkpoint_volume(location)] if location and location.kind == "gcs" else []
    return [*bucket, *job.volumes]
