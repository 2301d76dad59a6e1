"""The pod template of a training job: scheduling for its accelerator and Spot, resources,
the environment contract and checkpoint storage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.environment import CHECKPOINT_MOUNT, CODE_MOUNT, DEFAULT_MASTER_PORT
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.manifests import HOST_NETWORK_DNS_POLICY, add_network
from gkeml_sdk.hardware.protocol import Hardware
from gkeml_sdk.scheduling import spot
from gkeml_sdk.scheduling.manifests import accelerator_scheduling, topology_annotations
from gkeml_sdk.storage.checkpoints import checkpoint_volume, parse_checkpoint_dir
from gkeml_sdk.storage.manifests import pod_volumes
from gkeml_sdk.training.bootstrap import bootstrap_container, needs_bootstrap
from gkeml_sdk.training.code_configmap import code_volume
from gkeml_sdk.training.contract_env import CONTAINER, contract_env, launcher_command, run_labels
from gkeml_sdk.training.dra_claims import add_claims
from gkeml_sdk.training.provisioning import add_provisioning_scheduling
from gkeml_sdk.training.secret_env import secret_env_entries
from gkeml_sdk.training.workdir_job import WORKSPACE, workdir_pod_parts

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


def pod_template(job: TrainingJobFields, attempt: int = 1) -> Obj:
    """`PodTemplateSpec` for every pod of `job` (one pod per node / TPU VM).

    Example:
        >>> from gkeml_sdk import TrainingJob, Accelerator
        >>> t = pod_template(TrainingJob(name="a", command=["x"], accelerator=Accelerator("l4")))
        >>> t["spec"]["nodeSelector"]
        {'cloud.google.com/gke-accelerator': 'nvidia-l4'}
    """
    hardware = job.hardware
    selector, tolerations, affinity = accelerator_scheduling(hardware, on_spot=job.spot)
    add_provisioning_scheduling(job, selector, tolerations)
    volumes, mounts, annotations, checkpoint_path = _volumes(job, hardware)
    annotations.update(topology_annotations(job.placement))
    data = pod_volumes(job.volumes)
    volumes, mounts, volume_env = volumes + data.volumes, mounts + data.mounts, data.env
    annotations.update(data.annotations)
    code_volumes, code_mounts, code_env, code_annotations = workdir_pod_parts(job)
    volumes, mounts, volume_env = (
        volumes + code_volumes,
        mounts + code_mounts,
        volume_env + code_env,
    )
    annotations.update(code_annotations)
    container = _container(job, hardware, checkpoint_path, mounts, attempt, volume_env)
    spec = _spec(job, hardware, container, selector, affinity, tolerations, volumes)
    if needs_bootstrap(job):
        # Before the network stack's sidecars: they add nothing the bootstrap needs.
        spec["initContainers"] = [bootstrap_container(container)]
    metadata: Obj = {"labels": {**job.labels, **run_labels(job, attempt)}}
    if annotations or job.annotations:
        metadata["annotations"] = {**annotations, **job.annotations}
    template = add_network(
        {"metadata": metadata, "spec": spec}, job.network_choice.stack, CONTAINER
    )
    return add_claims(template, job, CONTAINER)


def _spec(
    job: TrainingJobFields,
    hardware: Hardware,
    container: Obj,
    selector: Obj,
    affinity: Obj,
    tolerations: list[Obj],
    volumes: list[Obj],
) -> Obj:
    # Kubernetes reads an absent field and an empty one alike; absent keeps manifests short.
    spec: Obj = {"restartPolicy": "Never"}
    if job.service_account:
        spec["serviceAccountName"] = job.service_account
    spec["terminationGracePeriodSeconds"] = _grace_seconds(job)
    if selector:
        spec["nodeSelector"] = selector
    if affinity:
        spec["affinity"] = affinity
    if tolerations:
        spec["tolerations"] = tolerations
    if hardware.host_ipc:
        spec["hostIPC"] = True
    if hardware.host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = HOST_NETWORK_DNS_POLICY
    spec["containers"] = [container]
    if volumes:
        spec["volumes"] = volumes
    return spec


def _container(
    job: TrainingJobFields,
    hardware: Hardware,
    checkpoint_path: str,
    mounts: list[Obj],
    attempt: int,
    volume_env: list[Obj],
) -> Obj:
    fixed = [{"name": k, "value": v} for k, v in hardware.fixed_env().items() if k not in job.env]
    env = (
        contract_env(job, checkpoint_path, attempt)
        + volume_env
        + fixed
        + [{"name": k, "value": v} for k, v in job.env.items()]
        + secret_env_entries(job)
    )
    command, args = launcher_command(job)
    container: Obj = {"name": CONTAINER}
    if job.image:
        container["image"] = job.image
    container["command"] = command
    if args:
        container["args"] = args
    if job.files:
        # Commands name the shipped files relative to the code directory, as locally.
        container["workingDir"] = CODE_MOUNT
    elif job.workdir is not None:
        container["workingDir"] = WORKSPACE  # the launcher unpacks the workdir there first
    container["env"] = env
    ports = _ports(job, hardware)
    if ports:
        container["ports"] = ports
    resources = _resources(job, hardware)
    if resources:
        container["resources"] = resources
    if mounts:
        container["volumeMounts"] = mounts
    return container


def _grace_seconds(job: TrainingJobFields) -> int:
    if job.termination_grace_seconds is not None:
        return job.termination_grace_seconds
    on_spot = job.spot or "spot" in job.capacity  # the shorter grace of any mode it may get
    return spot.SPOT_DEFAULT_GRACE_SECONDS if on_spot else spot.DEFAULT_GRACE_SECONDS


def _resources(job: TrainingJobFields, hardware: Hardware) -> Obj:
    requests: Obj = {}
    if job.cpu:
        requests["cpu"] = job.cpu
    if job.memory:
        requests["memory"] = job.memory
    requests.update(hardware.resources())
    if not requests:
        return {}
    limits = {k: v for k, v in requests.items() if k != "cpu"}
    return {"requests": requests, "limits": limits}


def _ports(job: TrainingJobFields, hardware: Hardware) -> list[Obj]:
    coordinator = [{"name": "coordinator", "containerPort": DEFAULT_MASTER_PORT}]
    return (coordinator if job.uses_jobset else []) + hardware.ports()


def _volumes(
    job: TrainingJobFields, hardware: Hardware
) -> tuple[list[Obj], list[Obj], dict[str, str], str]:
    volumes: list[Obj] = []
    mounts: list[Obj] = []
    annotations: dict[str, str] = {}
    if hardware.shared_memory:
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
    elif location.kind == "pvc":
        claim = {"claimName": location.source}
        volumes.append({"name": "checkpoints", "persistentVolumeClaim": claim})
        mount: Obj = {"name": "checkpoints", "mountPath": CHECKPOINT_MOUNT}
        if location.path:
            mount["subPath"] = location.path
        mounts.append(mount)
    else:
        # Only the checkpoint folder is mounted (only-dir), at the checkpoint mount.
        bucket = pod_volumes([checkpoint_volume(location)], env=False)
        volumes.extend(bucket.volumes)
        mounts.extend(bucket.mounts)
        annotations.update(bucket.annotations)
    if job.files:
        volume, mount = code_volume(job)
        volumes.append(volume)
        mounts.append(mount)
    return volumes, mounts, annotations, path
