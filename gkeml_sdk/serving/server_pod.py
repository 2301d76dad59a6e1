"""The server pod: the labels and selectors every serving object agrees on, and the model-server
container with its command, probes, GPU resources and volumes.
"""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING, Literal

from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.secret_ref import secret_env_entries
from gkeml_sdk.scheduling.kueue import QUEUE_LABEL
from gkeml_sdk.serving.catalog import CACHE_MOUNT, HTTP_PORT_NAME, SERVE_LABEL, TOKEN_ENV, Engine
from gkeml_sdk.serving.sizing import GB, Fit
from gkeml_sdk.storage.checkpoints import CheckpointLocation, parse_checkpoint_dir
from gkeml_sdk.storage.manifests import PodVolumes, pod_volumes

if TYPE_CHECKING:
    from gkeml_sdk.serving.fields import ServeFields

Role = Literal["server", "leader", "worker"]

CONTAINER = "server"
PRESTOP_SECONDS = 30  # lets load balancers stop sending before the engine drains
REPOSITORY_MOUNT = "/models"
MULTI_HOST_SHM = "15Gi"  # the GKE multi-host sample's /dev/shm limit
CACHE_HEADROOM = 1.1  # tokenizer, configs and partial downloads next to the weights
ROLE_LABEL = "gkeml.dev/role"  # leader / worker in a LeaderWorkerSet group
ENGINE_TYPE_LABEL = "inference.networking.k8s.io/engine-type"  # read by the endpoint picker
LWS_GROUP_KEY = "leaderworkerset.sigs.k8s.io/group-key"


def all_pods(svc: ServeFields) -> dict[str, str]:
    """Selects every pod of the service (leaders and workers).

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> all_pods(ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                     accelerator=Accelerator("l4")))
        {'gkeml.dev/serve': 'qa'}
    """
    return {SERVE_LABEL: svc.name}


def serving_pods(svc: ServeFields, fit: Fit) -> dict[str, str]:
    """Selects the pods that answer HTTP: all of them, or the group leaders when multi-host.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="big", model="meta-llama/Llama-3.1-405B-Instruct",
        ...                  accelerator=Accelerator("h100"), hf_token_secret="hf")
        >>> serving_pods(svc, svc.fit)
        {'gkeml.dev/serve': 'big', 'gkeml.dev/role': 'leader'}
    """
    if fit.multi_host:
        return {**all_pods(svc), ROLE_LABEL: "leader"}
    return all_pods(svc)


def metadata(svc: ServeFields, *, main: bool = False) -> dict[str, object]:
    """`metadata` of a serving object; the Deployment/LWS (`main`) carries the Kueue queue.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"), queue="team-a")
        >>> metadata(svc, main=True)["labels"]["kueue.x-k8s.io/queue-name"]
        'team-a'
    """
    labels = {**svc.labels, **sdk_labels(), **all_pods(svc)}
    if main and svc.queue:
        labels[QUEUE_LABEL] = svc.queue
    return {"name": svc.name, "namespace": svc.namespace, "labels": labels}


def server_args(svc: ServeFields, fit: Fit) -> list[str]:
    """The engine's command-line arguments (after its command), built from the row's flags.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct", engine="tgi",
        ...                  accelerator=Accelerator("l4"), max_model_len=4096)
        >>> " ".join(server_args(svc, svc.fit)[:7])
        '--json-output --model-id Qwen/Qwen2.5-7B-Instruct --hostname 0.0.0.0 --port 8000'
    """
    eng = svc.engine_row
    if eng.mpi is not None:
        return _mpi_args(svc, fit, eng)
    flags = eng.flags
    args = list(eng.base_args)

    def add(flag: str | None, value: object) -> None:
        if flag is not None:
            args.extend([flag, str(value)])

    add(flags.model, model_location(svc))
    # Clients keep naming the model, not the mount path it is loaded from.
    served = svc.served_model_name or (svc.model if svc.weights is not None else None)
    if served:
        add(flags.served_model_name, served)
    if flags.host:
        args.extend(flags.host)
    add(flags.port, eng.port)
    add(flags.tensor_parallel, fit.tensor_parallel)
    if fit.pipeline_parallel > 1:
        add(flags.pipeline_parallel, fit.pipeline_parallel)
    add(flags.max_model_len, fit.max_model_len)
    add(flags.max_input_len, fit.max_model_len - 1)
    add(flags.memory_fraction, f"{svc.gpu_memory_utilization:g}")
    batch = svc.max_batch_size or eng.default_max_batch
    if batch:
        add(flags.max_batch_size, batch)
    if not svc.quantization or eng.dtype_with_quantization:
        add(flags.dtype, svc.dtype)
    if svc.quantization:
        add(flags.quantization, eng.quantization_value(svc.quantization))
    if svc.kv_cache_dtype != "auto":
        add(flags.kv_cache_dtype, dict(eng.kv_cache_dtypes)[svc.kv_cache_dtype])
    if flags.prefix_caching:
        args.append(flags.prefix_caching[0 if svc.prefix_caching else 1])
    if svc.lora_adapters and flags.lora_enable and flags.lora_modules:
        args.append(flags.lora_enable)
        add(flags.lora_rank, svc.max_lora_rank)
        args.append(flags.lora_modules)
        args.extend(f"{name}={source}" for name, source in svc.lora_adapters.items())
    if fit.multi_host and eng.multi_host is not None:
        args.extend(eng.multi_host.args)
    return args + list(svc.extra_args)


def container(svc: ServeFields, fit: Fit, role: Role, startup_seconds: int) -> Obj:
    """The container of a single-host pod (`server`) or of a LeaderWorkerSet leader/worker.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"))
        >>> c = container(svc, svc.fit, "server", 600)
        >>> c["resources"]["limits"], c["startupProbe"]["failureThreshold"]
        ({'nvidia.com/gpu': 1}, 60)
    """
    eng = svc.engine_row
    out: Obj = {"name": CONTAINER, "image": svc.image or eng.image}
    if role == "server":
        out["command"] = list(eng.command)
        out["args"] = server_args(svc, fit)
    else:
        assert eng.multi_host is not None  # construction refuses multi-host elsewhere
        server = shlex.join([*eng.command, *server_args(svc, fit)])
        # The Ray bootstrap runs before the server in one shell; every argument is quoted.
        script = eng.multi_host.leader.format(server=server)
        out["command"] = ["bash", "-c"]
        out["args"] = [script if role == "leader" else eng.multi_host.worker]
    env = _env(svc, eng) + weights_pod(svc).env
    if env:
        out["env"] = env
    if role != "worker":
        out["ports"] = [
            {"name": name, "containerPort": port, "protocol": "TCP"}
            for name, port in ((HTTP_PORT_NAME, eng.port), *eng.extra_ports)
        ]
    out["resources"] = _resources(svc, fit)
    out["volumeMounts"] = _mounts(svc) + weights_pod(svc).mounts
    if role != "worker":
        out.update(_probes(eng, startup_seconds))
        out["lifecycle"] = {"preStop": {"sleep": {"seconds": PRESTOP_SECONDS}}}
    return out


def volumes(svc: ServeFields, fit: Fit) -> list[Obj]:
    """Pod volumes: shared memory for NCCL, the weight cache, the Triton model repository.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"))
        >>> [v["name"] for v in volumes(svc, svc.fit)]
        ['dshm', 'model-cache']
    """
    shm: Obj = {"medium": "Memory"}
    if fit.multi_host:
        shm["sizeLimit"] = MULTI_HOST_SHM
    out: list[Obj] = [{"name": "dshm", "emptyDir": shm}]
    cache = cache_size(svc, fit)
    if cache:
        out.append({"name": "model-cache", "emptyDir": {"sizeLimit": cache}})
    repo = _repository_volume(svc)
    if repo is not None:
        out.append(repo)
    return out + weights_pod(svc).volumes


def pod_annotations(svc: ServeFields) -> dict[str, str]:
    """Pod annotations: the Cloud Storage FUSE sidecar when the repository is a bucket.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> pod_annotations(ServeModel(name="t", engine="triton", model="mistral-7b",
        ...     accelerator=Accelerator("l4"), tensor_parallel=1, pipeline_parallel=1,
        ...     model_repository="gs://bucket/mistral", hf_token_secret="hf"))
        {'gke-gcsfuse/volumes': 'true'}
    """
    location = _repository(svc)
    if location is not None and location.kind == "gcs":
        return {"gke-gcsfuse/volumes": "true"}
    return weights_pod(svc).annotations


def grace_seconds(svc: ServeFields) -> int:
    """Termination grace: (longest request + preStop sleep) x 1.5.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> grace_seconds(ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                          accelerator=Accelerator("l4")))
        135
    """
    return math.ceil((svc.longest_request_seconds + PRESTOP_SECONDS) * 1.5)


def cache_size(svc: ServeFields, fit: Fit) -> str | None:
    """Disk for downloaded weights (every pod downloads what it loads), or None.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"))
        >>> cache_size(svc, svc.fit)
        '16Gi'
    """
    if not svc.engine_row.downloads_weights or svc.weights is not None:
        return None
    return f"{math.ceil(fit.weights_gb * GB * CACHE_HEADROOM / 2**30)}Gi"


def weights_pod(svc: ServeFields) -> PodVolumes:
    """What `svc.weights` adds to each server pod (nothing without it); mounted read-only,
    as every replica reads the same files.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk import Accelerator
        >>> from gkeml_sdk.storage.disks import HyperdiskML
        >>> svc = ServeModel(name="a", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), weights=HyperdiskML(pvc="qwen", mount="/w"))
        >>> weights_pod(svc).mounts
        [{'name': 'qwen', 'mountPath': '/w', 'readOnly': True}]
    """
    if svc.weights is None:
        return PodVolumes()
    return pod_volumes([svc.weights.model_copy(update={"read_only": True})])


def model_location(svc: ServeFields) -> str:
    """What the engine's model flag names: the mount path of the weights, else the Hub id.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk import Accelerator
        >>> from gkeml_sdk.storage.volumes import GcsFuse
        >>> model_location(ServeModel(name="a", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), weights=GcsFuse("models", path="qwen-7b")))
        '/gkeml/volumes/models'
    """
    return svc.weights.mount_path if svc.weights is not None else svc.model


def _env(svc: ServeFields, eng: Engine) -> list[Obj]:
    env: list[Obj] = []
    if svc.hf_token_secret:
        ref = {"name": svc.hf_token_secret, "key": svc.hf_token_key}
        env.extend({"name": n, "valueFrom": {"secretKeyRef": dict(ref)}} for n in TOKEN_ENV)
    env.extend({"name": k, "value": v} for k, v in eng.cache_env)
    env.extend({"name": k, "value": v} for k, v in svc.env.items())
    return env + secret_env_entries(svc.secret_env)


def _resources(svc: ServeFields, fit: Fit) -> Obj:
    gpu = {svc.accelerator.gpu.resource: fit.gpus_per_pod}  # the GPU row's resource name
    cache = cache_size(svc, fit)
    requests: Obj = {**gpu, "ephemeral-storage": cache} if cache else dict(gpu)
    return {"requests": requests, "limits": dict(gpu)}


def _mounts(svc: ServeFields) -> list[Obj]:
    mounts: list[Obj] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if svc.engine_row.downloads_weights and svc.weights is None:
        mounts.append({"name": "model-cache", "mountPath": CACHE_MOUNT})
    if _repository_volume(svc) is not None:
        mounts.append({"name": "model-repository", "mountPath": REPOSITORY_MOUNT, "readOnly": True})
    return mounts


def _probes(eng: Engine, startup_seconds: int) -> Obj:
    def probe(path: str, period: int, failures: int) -> Obj:
        return {
            "httpGet": {"path": path, "port": HTTP_PORT_NAME},
            "periodSeconds": period,
            "timeoutSeconds": 5,  # /health answers slowly under a full batch
            "failureThreshold": failures,
        }

    # Liveness must not fire while weights load: the startup probe holds it back.
    return {
        "startupProbe": probe(eng.startup_path, 10, math.ceil(startup_seconds / 10)),
        "readinessProbe": probe(eng.readiness_path, 5, 2),
        "livenessProbe": probe(eng.liveness_path, 10, 6),
    }


def _mpi_args(svc: ServeFields, fit: Fit, eng: Engine) -> list[str]:
    assert eng.mpi is not None
    ports = {HTTP_PORT_NAME: eng.port, **dict(eng.extra_ports)}
    args: list[str] = []
    for rank in range(fit.gpus_per_pod):  # one tritonserver per GPU of the TP x PP world
        if rank:
            args.append(eng.mpi.separator)
        args.extend(a.format(repo=repository_path(svc), rank=rank, **ports) for a in eng.mpi.rank)
        if rank:
            args.extend(eng.mpi.follower)
        args.extend(svc.extra_args)
    return args


def repository_path(svc: ServeFields) -> str:
    """Where the model repository is inside the container.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> repository_path(ServeModel(name="t", engine="triton", model="mistral-7b",
        ...     accelerator=Accelerator("l4"), tensor_parallel=1, pipeline_parallel=1,
        ...     model_repository="gs://bucket/mistral/tp1", hf_token_secret="hf"))
        '/models/mistral/tp1'
    """
    location = _repository(svc)
    if location is None:
        return model_location(svc) if svc.weights is not None else ""
    if location.kind == "path":
        return location.source
    return f"{REPOSITORY_MOUNT}/{location.path}".rstrip("/")


def _repository(svc: ServeFields) -> CheckpointLocation | None:
    return parse_checkpoint_dir(svc.model_repository) if svc.model_repository else None


def _repository_volume(svc: ServeFields) -> Obj | None:
    location = _repository(svc)
    if location is None or location.kind == "path":
        return None
    if location.kind == "pvc":
        return {
            "name": "model-repository",
            "persistentVolumeClaim": {"claimName": location.source, "readOnly": True},
        }
    return {
        "name": "model-repository",
        "csi": {
            "driver": "gcsfuse.csi.storage.gke.io",
            "readOnly": True,
            "volumeAttributes": {"bucketName": location.source, "mountOptions": "implicit-dirs"},
        },
    }
