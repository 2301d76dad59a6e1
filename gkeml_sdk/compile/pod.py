"""The pod template of a training job: scheduling for its accelerator and Spot, resources,
the environment contract and checkpoint storage."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.catalog import gpus, spot, tpus
from gkeml_sdk.catalog.contract import CHECKPOINT_MOUNT, CODE_MOUNT, DEFAULT_MASTER_PORT
from gkeml_sdk.compile.code import code_volume
from gkeml_sdk.compile.contract import CONTAINER, contract_env, run_labels
from gkeml_sdk.compile.secret_env import secret_env_entries
from gkeml_sdk.spec.accelerator import Accelerator
from gkeml_sdk.spec.job import TrainingJob
from gkeml_sdk.spec.storage import CheckpointLocation, parse_checkpoint_dir
from gkeml_sdk.spec.tpu import TpuSlice

Obj = dict[str, Any]


def pod_template(job: TrainingJob, attempt: int = 1) -> Obj:
    """`PodTemplateSpec` for every pod of `job` (one pod per node / TPU VM).

    Example:
        >>> from gkeml_sdk import TrainingJob, Accelerator
        >>> t = pod_template(TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4")))
        >>> t["spec"]["nodeSelector"]
        {'cloud.google.com/gke-accelerator': 'nvidia-l4'}
    """
    spec: Obj = {"restartPolicy": "Never"}
    if job.service_account:
        spec["serviceAccountName"] = job.service_account
    spec["terminationGracePeriodSeconds"] = _grace_seconds(job)
    node_selector, tolerations, affinity = _scheduling(job)
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    accelerator = job.accelerator
    if isinstance(accelerator, Accelerator) and accelerator.sharing == "mps":
        spec["hostIPC"] = True  # containers reach the node's MPS control daemon over IPC
    volumes, mounts, annotations, checkpoint_path = _volumes(job)
    container: Obj = {"name": CONTAINER}
    if job.image:
        container["image"] = job.image
    if job.command:
        container["command"] = list(job.command)
    if job.args:
        container["args"] = list(job.args)
    if job.files:
        # Commands name the shipped files relative to the code directory, as locally.
        container["workingDir"] = CODE_MOUNT
    container["env"] = (
        contract_env(job, checkpoint_path, attempt)
        + [{"name": k, "value": v} for k, v in job.env.items()]
        + secret_env_entries(job)
    )
    ports = _ports(job)
    if ports:
        container["ports"] = ports
    resources = _resources(job)
    if resources:
        container["resources"] = resources
    if mounts:
        container["volumeMounts"] = mounts
    spec["containers"] = [container]
    if volumes:
        spec["volumes"] = volumes
    metadata: Obj = {"labels": {**job.labels, **run_labels(job, attempt)}}
    if annotations or job.annotations:
        metadata["annotations"] = {**annotations, **job.annotations}
    return {"metadata": metadata, "spec": spec}


def _grace_seconds(job: TrainingJob) -> int:
    if job.termination_grace_seconds is not None:
        return job.termination_grace_seconds
    return spot.SPOT_DEFAULT_GRACE_SECONDS if job.spot else spot.DEFAULT_GRACE_SECONDS


def _scheduling(job: TrainingJob) -> tuple[dict[str, str], list[Obj], Obj]:
    return accelerator_scheduling(job.accelerator, on_spot=job.spot)


def accelerator_scheduling(
    accelerator: Accelerator | TpuSlice | None, *, on_spot: bool
) -> tuple[dict[str, str], list[Obj], Obj]:
    """Node selector, tolerations and node affinity for pods on `accelerator` (and Spot).

    Example:
        >>> selector, tolerations, _ = accelerator_scheduling(Accelerator("l4"), on_spot=True)
        >>> selector["cloud.google.com/gke-spot"], [t["key"] for t in tolerations]
        ('true', ['nvidia.com/gpu', 'cloud.google.com/gke-spot'])
    """
    selector: dict[str, str] = {}
    tolerations: list[Obj] = []
    affinity: Obj = {}
    if isinstance(accelerator, Accelerator):
        selector[gpus.ACCELERATOR_LABEL] = accelerator.label
        if accelerator.mig:
            selector[gpus.PARTITION_LABEL] = accelerator.mig
        if accelerator.sharing:
            affinity = _sharing_affinity(accelerator)
        tolerations.append(_toleration(gpus.GPU_TAINT_KEY))
    elif isinstance(accelerator, TpuSlice):
        selector[tpus.TPU_ACCELERATOR_LABEL] = accelerator.label
        selector[tpus.TPU_TOPOLOGY_LABEL] = accelerator.topology
        tolerations.append(_toleration(tpus.TPU_TAINT_KEY))
    if on_spot:
        selector[spot.SPOT_LABEL] = "true"
        tolerations.append(
            {
                "key": spot.SPOT_TAINT_KEY,
                "operator": "Equal",
                "value": "true",
                "effect": "NoSchedule",
            }
        )
    return selector, tolerations, affinity


def _sharing_affinity(accelerator: Accelerator) -> Obj:
    # GKE pages disagree on the strategy label's spelling, so accept both.
    assert accelerator.sharing is not None
    expressions = [
        {
            "key": gpus.SHARING_STRATEGY_LABEL,
            "operator": "In",
            "values": list(gpus.SHARING_LABEL_VALUES[accelerator.sharing]),
        },
        {
            "key": gpus.MAX_SHARED_CLIENTS_LABEL,
            "operator": "In",
            "values": [str(accelerator.clients_per_gpu)],
        },
    ]
    if accelerator.sharing == "mps" and accelerator.count > 1:
        # MPS grants more than one share per container only on nodes with exactly one GPU
        # (GKE's NVIDIA MPS page): pin the pod to those machine types.
        row = accelerator.gpu
        one_gpu = [accelerator.machine_type] if accelerator.machine_type else row.one_gpu_machines
        expressions.append(
            {"key": gpus.INSTANCE_TYPE_LABEL, "operator": "In", "values": list(one_gpu)}
        )
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions}]
            }
        }
    }


def _toleration(key: str) -> Obj:
    return {"key": key, "operator": "Exists", "effect": "NoSchedule"}


def _resources(job: TrainingJob) -> Obj:
    requests: Obj = {}
    if job.cpu:
        requests["cpu"] = job.cpu
    if job.memory:
        requests["memory"] = job.memory
    accelerator = job.accelerator
    if isinstance(accelerator, Accelerator):
        requests[gpus.GPU_RESOURCE] = accelerator.count
    elif isinstance(accelerator, TpuSlice):
        requests[tpus.TPU_RESOURCE] = accelerator.chips_per_host
    if not requests:
        return {}
    limits = {k: v for k, v in requests.items() if k != "cpu"}
    return {"requests": requests, "limits": limits}


def _ports(job: TrainingJob) -> list[Obj]:
    ports: list[Obj] = []
    if job.uses_jobset:
        ports.append({"name": "coordinator", "containerPort": DEFAULT_MASTER_PORT})
    if isinstance(job.accelerator, TpuSlice):
        ports += [
            {"name": "tpu-ici", "containerPort": tpus.TPU_PORTS[0]},
            {"name": "tpu-metrics", "containerPort": tpus.TPU_PORTS[1]},
        ]
    return ports


def _volumes(job: TrainingJob) -> tuple[list[Obj], list[Obj], dict[str, str], str]:
    volumes: list[Obj] = []
    mounts: list[Obj] = []
    annotations: dict[str, str] = {}
    if isinstance(job.accelerator, Accelerator):
        # PyTorch data loaders and NCCL use /dev/shm; the container default of 64 MiB is too small.
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory"}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    location = parse_checkpoint_dir(job.checkpoint_dir) if job.checkpoint_dir else None
    path = CHECKPOINT_MOUNT
    if location is None:
        # Survives container restarts only; pass checkpoint_dir to survive preemption.
        volumes.append({"name": "checkpoints", "emptyDir": {}})
        mounts.append({"name": "checkpoints", "mountPath": CHECKPOINT_MOUNT})
    elif location.kind == "path":
        path = location.source
    else:
        volumes.append(_checkpoint_volume(location))
        mount: Obj = {"name": "checkpoints", "mountPath": CHECKPOINT_MOUNT}
        if location.path and location.kind == "pvc":
            mount["subPath"] = location.path
        elif location.path:
            path = f"{CHECKPOINT_MOUNT}/{location.path}"
        mounts.append(mount)
        if location.kind == "gcs":
            annotations["gke-gcsfuse/volumes"] = "true"
    if job.files:
        volume, mount = code_volume(job)
        volumes.append(volume)
        mounts.append(mount)
    return volumes, mounts, annotations, path


def _checkpoint_volume(location: CheckpointLocation) -> Obj:
    if location.kind == "pvc":
        return {"name": "checkpoints", "persistentVolumeClaim": {"claimName": location.source}}
    return {
        "name": "checkpoints",
        "csi": {
            "driver": "gcsfuse.csi.storage.gke.io",
            "volumeAttributes": {"bucketName": location.source, "mountOptions": "implicit-dirs"},
        },
    }
