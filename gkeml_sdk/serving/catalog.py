"""LLM serving engines as data: image, command, flags, ports, probes and metric names
(from the vLLM, Hugging Face TGI and NVIDIA Triton docs). Adding an engine is one `Engine(...)`
row plus a test row; what a row holds, and the ports and names every engine shares, are in
`engine_row`.

A flag of `None` means the engine has no runtime flag for that concept: for TGI the concept
is missing (no pipeline parallelism), for Triton it was fixed when the TensorRT-LLM engine
was built. Which of the two is said by the row's capability fields.
"""

from __future__ import annotations

from gkeml_sdk.core.lookup import resolve
from gkeml_sdk.serving.engine_row import (
    CACHE_MOUNT,
    Engine,
    Flags,
    Metric,
    MpiRanks,
    MultiHost,
    Outcomes,
    SleepMode,
)

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


def _index() -> dict[str, Engine]:
    table: dict[str, Engine] = {}
    for row in ENGINES:
        for name in (row.key, *row.aliases):
            table[name] = row
    return table


_BY_NAME = _index()


def engine(name: str) -> Engine:
    """The engine row for a name or alias; `UnknownName` (with the closest match) otherwise.

    Example:
        >>> engine("TensorRT-LLM").key
        'triton'
    """
    # Exact names (every row's own key, as specs store it) skip normalising and the name list.
    return _BY_NAME.get(name) or resolve("engine", name, _BY_NAME, engine_names())


def engine_names() -> list[str]:
    """Canonical engine names, in catalog order.

    Example:
        >>> engine_names()
        ['vllm', 'tgi', 'triton']
    """
    return [row.key for row in ENGINES]
