"""Serving facts as rows: the engines, the open LLMs known by name and the weight formats, with
the ports and names every compiled server shares. Adding an engine or a model is one row.

Over 400 lines because it is one table of facts: most of it is rows, and its lookups read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gkeml_sdk.core.lookup import UnknownName, resolve

SERVICE_PORT = 8000  # every compiled Service listens here, whatever the engine's port
HTTP_PORT_NAME = "http"
TOKEN_ENV = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")  # current and legacy Hub names
DEFAULT_TOKEN_KEY = "hf_api_token"  # the key GKE samples store the token under
CACHE_MOUNT = "/data"
SERVE_LABEL = "gkeml.dev/serve"  # on every serving object and pod: the service's name


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

    A flag of `None` means the engine has no runtime flag for that concept: for TGI the
    concept is missing (no pipeline parallelism), for Triton it was fixed when the
    TensorRT-LLM engine was built. Which of the two is said by the row's capability fields.

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
    state_path: str  # GET: `{"is_sleeping": bool}`


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

    def scaling_metric(self, signal: str) -> Metric:
        """The gauge an autoscaler follows: the queue for "queue_depth", else the batch."""
        return self.queue_metric if signal == "queue_depth" else self.batch_metric


# From the vLLM, Hugging Face TGI and NVIDIA Triton docs.
ENGINES: tuple[Engine, ...] = (
    Engine(
        key="vllm",
        display="vLLM",
        image="vllm/vllm-openai:v0.10.0",
        # Older images start the API server module, newer ones `vllm serve`; naming the module
        # works with both.
        command=("python3", "-m", "vllm.entrypoints.openai.api_server"),
        port=8000,
        flags=Flags(
            model="--model",
            served_model_name="--served-model-name",
            host=("--host", "0.0.0.0"),
            port="--port",
            tensor_parallel="--tensor-parallel-size",
            pipeline_parallel="--pipeline-parallel-size",
            max_model_len="--max-model-len",
            memory_fraction="--gpu-memory-utilization",
            max_batch_size="--max-num-seqs",
            dtype="--dtype",
            quantization="--quantization",
            kv_cache_dtype="--kv-cache-dtype",
            prefix_caching=("--enable-prefix-caching", "--no-enable-prefix-caching"),
            lora_enable="--enable-lora",
            lora_rank="--max-lora-rank",
            lora_modules="--lora-modules",
        ),
        startup_path="/health",
        readiness_path="/health",
        liveness_path="/health",
        queue_metric=Metric("vllm:num_requests_waiting"),
        batch_metric=Metric("vllm:num_requests_running"),
        kv_metric=Metric("vllm:kv_cache_usage_perc"),
        # Failures: the API server's HTTP counter (prometheus-fastapi-instrumentator, status
        # grouped as 2xx/4xx/5xx); the engine counts only finished requests.
        outcomes=Outcomes(
            Metric("vllm:request_success_total"),
            Metric("http_requests_total", (("status", "5xx"),)),
            latency="vllm:e2e_request_latency_seconds",
        ),
        quantizations=(
            ("fp8", "fp8"),
            ("awq", "awq"),
            ("gptq", "gptq"),
            ("bitsandbytes-nf4", "bitsandbytes"),
        ),
        kv_cache_dtypes=(("fp8", "fp8"),),
        dtypes=("bfloat16", "float16", "float32"),
        pipeline_parallel=True,
        multi_host=MultiHost(
            leader="bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader "
            "--ray_cluster_size=$(LWS_GROUP_SIZE); exec {server}",
            worker="bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker "
            "--ray_address=$(LWS_LEADER_ADDRESS)",
            args=("--distributed-executor-backend", "ray"),
        ),
        sleep_mode=SleepMode(
            flag="--enable-sleep-mode",
            env=(("VLLM_SERVER_DEV_MODE", "1"),),
            sleep_path="/sleep?level=1",
            wake_path="/wake_up",
            state_path="/is_sleeping",
        ),
        cache_env=(("HF_HOME", f"{CACHE_MOUNT}/huggingface"),),
        gateway_engine_type="vllm",
        default_max_batch=256,
        reserved_names=("vllm",),
    ),
    Engine(
        key="tgi",
        display="Hugging Face TGI",
        image="ghcr.io/huggingface/text-generation-inference:3.3.5",
        command=("text-generation-launcher",),
        port=8000,
        flags=Flags(
            model="--model-id",
            host=("--hostname", "0.0.0.0"),
            port="--port",
            tensor_parallel="--num-shard",
            max_model_len="--max-total-tokens",
            max_input_len="--max-input-tokens",
            memory_fraction="--cuda-memory-fraction",
            dtype="--dtype",
            quantization="--quantize",
            kv_cache_dtype="--kv-cache-dtype",
        ),
        startup_path="/health",
        readiness_path="/health",
        liveness_path="/health",
        queue_metric=Metric("tgi_queue_size"),
        batch_metric=Metric("tgi_batch_current_size"),
        kv_metric=None,
        outcomes=Outcomes(
            Metric("tgi_request_success"),
            Metric("tgi_request_failure"),
            latency="tgi_request_duration",
        ),
        quantizations=(
            ("fp8", "fp8"),
            ("int8", "eetq"),
            ("awq", "awq"),
            ("gptq", "gptq"),
            ("bitsandbytes", "bitsandbytes"),
            ("bitsandbytes-nf4", "bitsandbytes-nf4"),
        ),
        kv_cache_dtypes=(("fp8", "fp8_e4m3fn"),),
        dtypes=("bfloat16", "float16"),
        pipeline_parallel=False,
        # The image's CMD is --json-output; explicit args replace it, so keep it.
        base_args=("--json-output",),
        dtype_with_quantization=False,
        cache_env=(("HUGGINGFACE_HUB_CACHE", CACHE_MOUNT),),
        status="legacy",
        notes=("TGI is in maintenance mode upstream; prefer engine='vllm' for new services",),
    ),
    Engine(
        key="triton",
        display="Triton + TensorRT-LLM",
        image="nvcr.io/nvidia/tritonserver:25.06-trtllm-python-py3",
        command=("mpirun", "--allow-run-as-root"),
        port=8000,
        flags=Flags(),
        startup_path="/v2/health/ready",
        readiness_path="/v2/health/ready",
        liveness_path="/v2/health/live",
        # The generic pending count needs no label filter, so HPA can use a per-pod metric.
        queue_metric=Metric("nv_inference_pending_request_count"),
        batch_metric=Metric("nv_trt_llm_request_metrics", (("request_type", "scheduled"),)),
        # Triton's durations are cumulative microsecond counters, not a histogram.
        outcomes=Outcomes(
            Metric("nv_inference_request_success"), Metric("nv_inference_request_failure")
        ),
        kv_metric=Metric(
            "nv_trt_llm_kv_cache_block_metrics", (("kv_cache_block_type", "fraction"),)
        ),
        quantizations=(("fp8", None), ("int8", None), ("awq", None), ("gptq", None)),
        kv_cache_dtypes=(("fp8", None),),
        dtypes=("bfloat16", "float16"),
        pipeline_parallel=True,
        extra_ports=(("grpc", 8001), ("metrics", 8002)),
        metrics_port="metrics",
        mpi=MpiRanks(
            rank=(
                "-n",
                "1",
                "tritonserver",
                "--model-repository={repo}",
                "--http-port={http}",
                "--grpc-port={grpc}",
                "--metrics-port={metrics}",
                "--disable-auto-complete-config",
                "--backend-config=python,shm-region-prefix-name=prefix{rank}_",
            ),
            follower=("--model-control-mode=explicit", "--load-model=tensorrt_llm"),
        ),
        parallelism_at_build=True,
        downloads_weights=False,
        gateway_engine_type="triton-tensorrt-llm",
        aliases=("tensorrt-llm", "trtllm", "triton-trtllm"),
        notes=(
            "Triton serves a TensorRT-LLM engine built offline: tensor/pipeline parallelism, "
            "max batch size and KV-cache fraction come from the engine and its config.pbtxt",
        ),
    ),
)


def _engine_index() -> dict[str, Engine]:
    table: dict[str, Engine] = {}
    for row in ENGINES:
        for name in (row.key, *row.aliases):
            table[name] = row
    return table


_ENGINES_BY_NAME = _engine_index()


def engine(name: str) -> Engine:
    """The engine row for a name or alias; `UnknownName` (with the closest match) otherwise.

    Example:
        >>> engine("TensorRT-LLM").key
        'triton'
    """
    # Exact names (every row's own key, as specs store it) skip normalising and the name list.
    return _ENGINES_BY_NAME.get(name) or resolve("engine", name, _ENGINES_BY_NAME, engine_names())


def engine_names() -> list[str]:
    """Canonical engine names, in catalog order.

    Example:
        >>> engine_names()
        ['vllm', 'tgi', 'triton']
    """
    return [row.key for row in ENGINES]


@dataclass(frozen=True)
class LlmModel:
    """One open model's size and attention shape, as sizing needs them.

    Example:
        >>> from gkeml_sdk.serving.catalog import llm_model
        >>> row = llm_model("meta-llama/Llama-3.1-70B-Instruct")
        >>> row.params_b, row.layers, row.kv_heads, row.head_dim
        (70.6, 80, 8, 128)
    """

    ids: tuple[str, ...]  # Hugging Face repo ids; the first is canonical
    display: str
    params_b: float  # billions of parameters, every expert included for MoE
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    max_context: int
    gated: bool = False  # the Hub asks for a token (licence acceptance)
    # Multi-head latent attention (DeepSeek-V3/R1) caches one latent per layer instead of K/V heads.
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    checkpoint_quantization: str | None = None  # how the published weights are stored
    aliases: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The canonical repo id."""
        return self.ids[0]

    @property
    def mla(self) -> bool:
        """True for multi-head latent attention models."""
        return self.kv_lora_rank > 0


# Architecture facts from each model's `config.json`.
MODELS: tuple[LlmModel, ...] = (
    LlmModel(
        ("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B"),
        "Llama 3.2 1B",
        1.24,
        16,
        32,
        8,
        64,
        131072,
        gated=True,
        aliases=("llama-3.2-1b",),
    ),
    LlmModel(
        ("meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.2-3B"),
        "Llama 3.2 3B",
        3.21,
        28,
        24,
        8,
        128,
        131072,
        gated=True,
        aliases=("llama-3.2-3b",),
    ),
    LlmModel(
        (
            "meta-llama/Llama-3.1-8B-Instruct",
            "meta-llama/Llama-3.1-8B",
            "meta-llama/Meta-Llama-3.1-8B-Instruct",
            "meta-llama/Meta-Llama-3.1-8B",
        ),
        "Llama 3.1 8B",
        8.03,
        32,
        32,
        8,
        128,
        131072,
        gated=True,
        aliases=("llama-3.1-8b",),
    ),
    LlmModel(
        ("meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B"),
        "Llama 3 8B",
        8.03,
        32,
        32,
        8,
        128,
        8192,
        gated=True,
        aliases=("llama-3-8b",),
    ),
    LlmModel(
        (
            "meta-llama/Llama-3.1-70B-Instruct",
            "meta-llama/Llama-3.1-70B",
            "meta-llama/Meta-Llama-3.1-70B-Instruct",
            "meta-llama/Meta-Llama-3.1-70B",
            "meta-llama/Llama-3.3-70B-Instruct",
        ),
        "Llama 3.1 70B",
        70.6,
        80,
        64,
        8,
        128,
        131072,
        gated=True,
        aliases=("llama-3.1-70b", "llama-3.3-70b"),
    ),
    LlmModel(
        ("meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama/Meta-Llama-3-70B"),
        "Llama 3 70B",
        70.6,
        80,
        64,
        8,
        128,
        8192,
        gated=True,
        aliases=("llama-3-70b",),
    ),
    LlmModel(
        (
            "meta-llama/Llama-3.1-405B-Instruct",
            "meta-llama/Llama-3.1-405B",
            "meta-llama/Meta-Llama-3.1-405B-Instruct",
            "meta-llama/Meta-Llama-3.1-405B",
        ),
        "Llama 3.1 405B",
        405.9,
        126,
        128,
        8,
        128,
        131072,
        gated=True,
        aliases=("llama-3.1-405b",),
    ),
    LlmModel(
        ("meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf"),
        "Llama 2 7B",
        6.74,
        32,
        32,
        32,
        128,
        4096,
        gated=True,
        aliases=("llama-2-7b",),
    ),
    LlmModel(
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0",),
        "TinyLlama 1.1B",
        1.1,
        22,
        32,
        4,
        64,
        2048,
        aliases=("tiny-llama-1b", "tinyllama-1.1b"),
    ),
    LlmModel(
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-v0.3"),
        "Mistral 7B v0.3",
        7.25,
        32,
        32,
        8,
        128,
        32768,
        gated=True,
        aliases=("mistral-7b",),
    ),
    LlmModel(
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x7B-v0.1"),
        "Mixtral 8x7B",
        46.7,
        32,
        32,
        8,
        128,
        32768,
        gated=True,
        aliases=("mixtral-8x7b",),
    ),
    LlmModel(
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B"),
        "Qwen2.5 7B",
        7.62,
        28,
        28,
        4,
        128,
        32768,
        aliases=("qwen2.5-7b",),
    ),
    LlmModel(
        ("Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B"),
        "Qwen2.5 72B",
        72.7,
        80,
        64,
        8,
        128,
        32768,
        aliases=("qwen2.5-72b",),
    ),
    LlmModel(
        ("google/gemma-2-9b-it", "google/gemma-2-9b"),
        "Gemma 2 9B",
        9.24,
        42,
        16,
        8,
        256,
        8192,
        gated=True,
        aliases=("gemma-2-9b",),
    ),
    LlmModel(
        ("google/gemma-2-27b-it", "google/gemma-2-27b"),
        "Gemma 2 27B",
        27.2,
        46,
        32,
        16,
        128,
        8192,
        gated=True,
        aliases=("gemma-2-27b",),
    ),
    LlmModel(
        ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1-0528"),
        "DeepSeek-R1 671B MoE (MLA)",
        671.0,
        61,
        128,
        128,
        128,
        163840,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        checkpoint_quantization="fp8",
        aliases=("deepseek-r1", "deepseek-v3"),
    ),
)


def _model_index() -> dict[str, LlmModel]:
    table: dict[str, LlmModel] = {}
    for row in MODELS:
        for name in (*row.ids, *row.aliases):
            table[name.lower()] = row
    return table


_MODELS_BY_NAME = _model_index()


def find_model(name: str) -> LlmModel | None:
    """The catalog row for a repo id or alias (case-insensitive), or None.

    Example:
        >>> find_model("Qwen/Qwen2.5-7B-Instruct").kv_heads
        4
        >>> find_model("my-org/my-model") is None
        True
    """
    return _MODELS_BY_NAME.get(name.strip().lower())


def llm_model(name: str) -> LlmModel:
    """Like `find_model`, but raises `UnknownName` with the closest known model.

    Example:
        >>> llm_model("mistral-7b").display
        'Mistral 7B v0.3'
    """
    row = find_model(name)
    if row is None:
        raise UnknownName("model", name, model_names(), _MODELS_BY_NAME.keys())
    return row


def model_names() -> list[str]:
    """Canonical repo ids of every catalog model, in catalog order.

    Example:
        >>> "deepseek-ai/DeepSeek-R1" in model_names()
        True
    """
    return [row.key for row in MODELS]


@dataclass(frozen=True)
class WeightFormat:
    """Storage of weights: bytes per parameter, and whether it needs a pre-quantized checkpoint.

    Example:
        >>> weight_format("awq").bytes_per_param, weight_format("awq").prequantized
        (0.54, True)
    """

    name: str
    bytes_per_param: float
    prequantized: bool = False  # AWQ/GPTQ load quantized checkpoints; others quantize in flight
    min_compute: float = 7.0  # CUDA compute capability its kernels need
    note: str = ""


# Bytes per parameter and the CUDA compute capability each needs (GKE's "Best practices for
# optimizing LLM inference with GPUs").
DTYPE_BYTES: dict[str, float] = {"bfloat16": 2.0, "float16": 2.0, "float32": 4.0}
DTYPE_MIN_COMPUTE: dict[str, float] = {"bfloat16": 8.0, "float16": 7.0, "float32": 7.0}
KV_CACHE_BYTES: dict[str, float | None] = {"auto": None, "fp8": 1.0}  # None: same as dtype

# 4-bit formats carry per-group scales and zeros, +5-10 % by GKE's sizing guide; 8 % keeps the
# estimate on the safe side (70B -> 37.8 GB against the table's 35-38 GB).
_INT4 = 0.5 * 1.08

QUANTIZATIONS: tuple[WeightFormat, ...] = (
    # Native from 8.9 (L4, H100); Ampere runs fp8 weights through weight-only kernels.
    WeightFormat("fp8", 1.0, min_compute=8.0),
    WeightFormat("int8", 1.0),
    WeightFormat("awq", _INT4, prequantized=True, min_compute=7.5),
    WeightFormat("gptq", _INT4, prequantized=True),
    WeightFormat("bitsandbytes", 1.0),
    WeightFormat("bitsandbytes-nf4", _INT4),
)


def weight_format(name: str) -> WeightFormat:
    """The row of a quantization name (`UnknownName` lists the valid ones).

    Example:
        >>> weight_format("fp8").bytes_per_param
        1.0
    """
    for row in QUANTIZATIONS:
        if row.name == name:
            return row
    raise UnknownName("quantization", name, [q.name for q in QUANTIZATIONS])
