"""What one serving engine row holds (`Engine` and its parts: flags, metrics, multi-host
launch), and the ports and names every compiled server shares (from the vLLM, Hugging Face
TGI and NVIDIA Triton docs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SERVICE_PORT = 8000  # every compiled Service listens here, whatever the engine's port
HTTP_PORT_NAME = "http"
TOKEN_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")  # current and legacy Hub names
DEFAULT_TOKEN_KEY = "hf_api_token"  # the key GKE samples store the token under
CACHE_MOUNT = "/data"


@dataclass(frozen=True)
class Metric:
    """A Prometheus gauge, with the labels that select the series to scale on.

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> engine("triton").batch_metric.labels
        (('request_type', 'scheduled'),)
    """

    name: str
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Outcomes:
    """The counters (and latency histogram) a canary is judged on, from the engine's /metrics.

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> engine("tgi").outcomes.failure.name
        'tgi_request_failure'
    """

    success: Metric
    failure: Metric
    latency: str | None = None  # a histogram in seconds: <name>_bucket{le=...}


@dataclass(frozen=True)
class Flags:
    """Command-line flag names for the SDK's concepts (None: no runtime flag).

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> engine("tgi").flags.tensor_parallel, engine("tgi").flags.pipeline_parallel
        ('--num-shard', None)
    """

    model: str | None = None
    served_model_name: str | None = None
    host: tuple[str, str] | None = None  # flag and the all-interfaces value
    port: str | None = None
    tensor_parallel: str | None = None
    pipeline_parallel: str | None = None
    max_model_len: str | None = None
    max_input_len: str | None = None  # TGI: prompt tokens, one less than max_model_len
    memory_fraction: str | None = None
    max_batch_size: str | None = None
    dtype: str | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    prefix_caching: tuple[str, str] | None = None  # flag to turn it on, flag to turn it off
    lora_enable: str | None = None
    lora_rank: str | None = None
    lora_modules: str | None = None


@dataclass(frozen=True)
class MultiHost:
    """How a model server spans several pods of a LeaderWorkerSet group, as GKE's
    "Serve an LLM using multi-host GPUs" tutorial and vLLM's LWS guide do.

    `leader` and `worker` are shell scripts: `$(LWS_...)` is expanded by Kubernetes from
    the env LWS injects, `{server}` becomes the quoted server command line.

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> engine("vllm").multi_host.args
        ('--distributed-executor-backend', 'ray')
    """

    leader: str
    worker: str
    args: tuple[str, ...] = ()  # extra server args when the group spans nodes


@dataclass(frozen=True)
class MpiRanks:
    """Triton + TensorRT-LLM: one `tritonserver` per GPU under mpirun, the argument lists of
    TensorRT-LLM's `launch_triton_server.py` written out so the container's main process
    is mpirun itself (the script backgrounds it and exits).

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> engine("triton").mpi.follower
        ('--model-control-mode=explicit', '--load-model=tensorrt_llm')
    """

    rank: tuple[str, ...]  # placeholders: {repo}, {rank}, {http}, {grpc}, {metrics}
    follower: tuple[str, ...]  # appended for ranks > 0
    separator: str = ":"


@dataclass(frozen=True)
class SleepMode:
    """How a started server parks its weights off the GPU and takes them back (vLLM's
    "Sleep Mode" page): the warm standby tier.

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> engine("vllm").sleep_mode.wake_path
        '/wake_up'
    """

    flag: str
    env: tuple[tuple[str, str], ...]  # the sleep/wake endpoints are development endpoints
    sleep_path: str
    wake_path: str


@dataclass(frozen=True)
class Engine:
    """One serving engine.

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> e = engine("vllm")
        >>> e.image, e.port, e.queue_metric.name
        ('vllm/vllm-openai:v0.10.0', 8000, 'vllm:num_requests_waiting')
    """

    key: str
    display: str
    image: str
    command: tuple[str, ...]
    port: int
    flags: Flags
    startup_path: str
    readiness_path: str
    liveness_path: str
    queue_metric: Metric
    batch_metric: Metric
    kv_metric: Metric | None
    # SDK quantization name -> the engine's flag value (None: fixed at engine build, no flag)
    quantizations: tuple[tuple[str, str | None], ...]
    kv_cache_dtypes: tuple[tuple[str, str | None], ...]
    dtypes: tuple[str, ...]
    pipeline_parallel: bool
    base_args: tuple[str, ...] = ()
    extra_ports: tuple[tuple[str, int], ...] = ()
    metrics_port: str = HTTP_PORT_NAME
    metrics_path: str = "/metrics"
    multi_host: MultiHost | None = None
    mpi: MpiRanks | None = None
    sleep_mode: SleepMode | None = None
    parallelism_at_build: bool = False  # TP/PP/batch baked into the engine files
    dtype_with_quantization: bool = True
    downloads_weights: bool = True  # from the Hugging Face Hub at start-up
    cache_env: tuple[tuple[str, str], ...] = ()
    outcomes: Outcomes | None = None  # what a canary's gate reads
    gateway_engine_type: str | None = None  # Inference Gateway EPP model-server type
    min_compute_capability: float = 7.0  # vLLM's floor; older GPUs (P4, P100) cannot serve
    default_max_batch: int | None = None  # stated explicitly: defaults differ by version/GPU
    # Service names whose injected <NAME>_PORT variable the engine misreads (vLLM: VLLM_PORT).
    reserved_names: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    status: Literal["supported", "legacy"] = "supported"
    notes: tuple[str, ...] = field(default=())

    def quantization_value(self, name: str) -> str | None:
        """The engine's flag value for an SDK quantization (KeyError when unsupported)."""
        return dict(self.quantizations)[name]

    def supports_quantization(self, name: str) -> bool:
        """Whether the engine can serve weights in this quantization."""
        return name in dict(self.quantizations)
