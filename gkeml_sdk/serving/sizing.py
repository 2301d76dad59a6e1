"""GPU memory of a served LLM and the choice of tensor/pipeline parallelism
(GKE's "Best practices for optimizing LLM inference with GPUs" and vLLM's "Parallelism and
Scaling" guide): pure arithmetic on catalog facts.

Units: weights and GPU memory in GB (10^9 bytes, as GPU data sheets count them);
KV cache per token in bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from gkeml_sdk.serving.llm_catalog import LlmModel
from gkeml_sdk.storage import catalog as storage

GB = 1e9
# Activations and CUDA graphs take ~1-4 GiB per GPU; 2 GB reproduces GKE's worked example of
# "~55 GB/GPU left for KV" for 70B bf16 at TP2 on H200.
ACTIVATION_OVERHEAD_GB = 2.0
# The KV cache should hold at least 2-4 sequences of max_model_len.
MIN_SEQUENCES = 2
TP_SIZES = (1, 2, 4, 8, 16)  # powers of two: NVLink topologies and head counts divide evenly
MAX_NODES = 8
# Start-up: engine init and CUDA-graph capture, plus downloading the weights from the Hub.
STARTUP_BASE_SECONDS = 300
DOWNLOAD_GB_PER_SECOND = storage.HUB_GB_PER_SECOND
MIN_STARTUP_SECONDS = 600  # GKE's serving samples' startup probes allow 10 minutes


@dataclass(frozen=True)
class ModelShape:
    """The parts of a model's config that sizing reads.

    Example:
        >>> shape = ModelShape(params_b=8.0, layers=32, attention_heads=32, kv_heads=8,
        ...                    head_dim=128)
        >>> kv_bytes_per_token(shape, 2.0)
        131072.0
    """

    params_b: float
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    kv_latent: int = 0  # MLA: kv_lora_rank + qk_rope_head_dim, cached once per layer

    @classmethod
    def of(cls, row: LlmModel) -> ModelShape:
        """The shape of a catalog model."""
        return cls(
            row.params_b,
            row.layers,
            row.attention_heads,
            row.kv_heads,
            row.head_dim,
            row.kv_lora_rank + row.qk_rope_head_dim,
        )


@dataclass(frozen=True)
class SizingInput:
    """Everything one sizing decision depends on.

    Example:
        >>> inp = SizingInput(ModelShape(8.0, 32, 32, 8, 128), 2.0, 2.0, 24, 8, 0.9, 8192)
        >>> choose(inp).tensor_parallel
        1
    """

    model: ModelShape
    weight_bytes: float  # per parameter
    kv_bytes: float  # per cached K or V value
    gpu_memory_gb: float  # one GPU (or MIG slice)
    gpus_per_node: int
    utilization: float  # fraction of GPU memory the engine may take
    max_model_len: int
    sequences: int = MIN_SEQUENCES  # full-length sequences the KV cache must hold
    tensor_parallel: int | None = None  # None: choose
    pipeline_parallel: int | None = None  # None: choose
    multi_host: bool = True  # the engine can span several nodes
    pipeline: bool = True  # the engine supports pipeline parallelism


@dataclass(frozen=True)
class Fit:
    """Memory per GPU for one parallel shape.

    Example:
        >>> shape = ModelShape(70.0, 80, 64, 8, 128)
        >>> f = evaluate(SizingInput(shape, 2.0, 2.0, 80, 8, 0.9, 8192), 4, 1, 1)
        >>> round(f.weights_gb_per_gpu, 1), round(f.kv_gb_per_gpu, 1), f.fits
        (35.0, 35.0, True)
    """

    tensor_parallel: int
    pipeline_parallel: int
    pods: int  # pods (nodes) per replica: 1, or PP stages across nodes
    gpus_per_pod: int
    gpu_memory_gb: float
    usable_gb: float
    weights_gb: float  # whole model
    weights_gb_per_gpu: float
    overhead_gb: float
    kv_gb_per_gpu: float
    kv_bytes_per_token: float  # whole model
    kv_bytes_per_token_per_gpu: float
    max_model_len: int
    sequences: int

    @property
    def kv_tokens(self) -> int:
        """Tokens the KV cache of one replica holds (every GPU holds a slice of each)."""
        if self.kv_gb_per_gpu <= 0:
            return 0
        return int(self.kv_gb_per_gpu * GB // self.kv_bytes_per_token_per_gpu)

    @property
    def max_concurrency(self) -> float:
        """Sequences of `max_model_len` that fit at once (vLLM logs this at start-up)."""
        return self.kv_tokens / self.max_model_len

    @property
    def fits(self) -> bool:
        """Weights, overhead and the required KV cache fit in usable memory."""
        return self.kv_tokens >= self.sequences * self.max_model_len

    @property
    def gpus(self) -> int:
        """GPUs one replica uses."""
        return self.gpus_per_pod * self.pods

    @property
    def multi_host(self) -> bool:
        """True when one replica spans several nodes."""
        return self.pods > 1


def kv_bytes_per_token(model: ModelShape, kv_bytes: float) -> float:
    """KV cache bytes one token takes in the whole model.

    Standard attention: 2 (K and V) x layers x kv_heads x head_dim x bytes; multi-head
    latent attention: layers x latent width x bytes.

    Example:
        >>> kv_bytes_per_token(ModelShape(671.0, 61, 128, 128, 128, kv_latent=576), 2.0)
        70272.0
    """
    if model.kv_latent:
        return model.layers * model.kv_latent * kv_bytes
    return 2 * model.layers * model.kv_heads * model.head_dim * kv_bytes


def kv_bytes_per_token_per_gpu(model: ModelShape, kv_bytes: float, tp: int, pp: int) -> float:
    """KV bytes per token on one GPU: PP splits the layers, TP the KV heads while TP <= KV
    heads (beyond that heads are replicated); an MLA latent is replicated on every TP rank.

    Example:
        >>> kv_bytes_per_token_per_gpu(ModelShape(70.0, 80, 64, 8, 128), 2.0, 4, 1)
        81920.0
    """
    layers = math.ceil(model.layers / pp)
    if model.kv_latent:
        return layers * model.kv_latent * kv_bytes
    heads = math.ceil(model.kv_heads / tp)
    return 2 * layers * heads * model.head_dim * kv_bytes


def evaluate(inp: SizingInput, tp: int, pp: int, pods: int) -> Fit:
    """Memory per GPU when `inp` runs at TP x PP over `pods` pods.

    Example:
        >>> inp = SizingInput(ModelShape(405.0, 126, 128, 8, 128), 2.0, 2.0, 80, 8, 0.9, 8192)
        >>> f = evaluate(inp, 8, 2, 2)
        >>> f.gpus_per_pod, f.gpus, round(f.weights_gb_per_gpu, 1)
        (8, 16, 50.6)
    """
    weights_gb = inp.model.params_b * inp.weight_bytes
    usable = inp.utilization * inp.gpu_memory_gb
    per_gpu = weights_gb / (tp * pp)
    return Fit(
        tensor_parallel=tp,
        pipeline_parallel=pp,
        pods=pods,
        gpus_per_pod=tp * pp // pods,
        gpu_memory_gb=inp.gpu_memory_gb,
        usable_gb=usable,
        weights_gb=weights_gb,
        weights_gb_per_gpu=per_gpu,
        overhead_gb=ACTIVATION_OVERHEAD_GB,
        kv_gb_per_gpu=usable - per_gpu - ACTIVATION_OVERHEAD_GB,
        kv_bytes_per_token=kv_bytes_per_token(inp.model, inp.kv_bytes),
        kv_bytes_per_token_per_gpu=kv_bytes_per_token_per_gpu(inp.model, inp.kv_bytes, tp, pp),
        max_model_len=inp.max_model_len,
        sequences=inp.sequences,
    )


def valid_tensor_parallel(model: ModelShape, gpus_per_node: int) -> list[int]:
    """TP sizes that divide the attention heads and stay inside one node.

    Example:
        >>> valid_tensor_parallel(ModelShape(7.6, 28, 28, 4, 128), 8)
        [1, 2, 4]
    """
    return [t for t in TP_SIZES if t <= gpus_per_node and model.attention_heads % t == 0]


def shapes(inp: SizingInput) -> list[Fit]:
    """Every shape the rules allow, smallest first: one node first, then PP across nodes.

    Example:
        >>> inp = SizingInput(ModelShape(7.6, 28, 28, 4, 128), 2.0, 2.0, 24, 8, 0.9, 8192,
        ...                   multi_host=False)
        >>> [(f.tensor_parallel, f.fits) for f in shapes(inp)]
        [(1, True), (2, True), (4, True)]
    """
    return [evaluate(inp, tp, pp, pods) for tp, pp, pods in _candidates(inp)]


def choose(inp: SizingInput) -> Fit | None:
    """The smallest shape that fits, or None.

    Example:
        >>> shape = ModelShape(70.0, 80, 64, 8, 128)
        >>> f = choose(SizingInput(shape, 2.0, 2.0, 80, 8, 0.9, 8192))
        >>> f.tensor_parallel, f.pipeline_parallel
        (4, 1)
    """
    return next((f for f in shapes(inp) if f.fits), None)


def expected_startup_seconds(weights_gb: float, gb_per_second: float | None) -> int:
    """Seconds a replica is expected to take to start: init and graph capture, plus reading
    the weights at `gb_per_second` (None: nothing to fetch).

    Example:
        >>> expected_startup_seconds(141.2, 0.25), expected_startup_seconds(141.2, 2.5)
        (865, 357)
    """
    load = weights_gb / gb_per_second if gb_per_second else 0
    return math.ceil(STARTUP_BASE_SECONDS + load)


def startup_seconds(weights_gb: float, gb_per_second: float | None = DOWNLOAD_GB_PER_SECOND) -> int:
    """Seconds a start-up probe should allow: the expected start-up rounded up to a minute,
    and never below GKE's 10-minute sample budget.

    Example:
        >>> startup_seconds(141.2), startup_seconds(141.2, 2.5)
        (900, 600)
    """
    seconds = expected_startup_seconds(weights_gb, gb_per_second)
    return max(MIN_STARTUP_SECONDS, math.ceil(seconds / 60) * 60)


def _candidates(inp: SizingInput) -> Iterator[tuple[int, int, int]]:
    per_node = inp.gpus_per_node
    tps = (
        [inp.tensor_parallel] if inp.tensor_parallel else valid_tensor_parallel(inp.model, per_node)
    )
    pps = [inp.pipeline_parallel] if inp.pipeline_parallel else [1]
    single = sorted(
        ((tp, pp) for tp in tps for pp in pps if tp * pp <= per_node),
        key=lambda shape: shape[0] * shape[1],
    )
    for tp, pp in single:
        yield tp, pp, 1
    if not (inp.multi_host and inp.pipeline) or not tps:
        return
    # Across nodes: TP fills each node, PP = number of nodes (vLLM's "Parallelism and Scaling").
    node_tp = max(tps)
    stages = [inp.pipeline_parallel] if inp.pipeline_parallel else range(2, MAX_NODES + 1)
    for pp in stages:
        if node_tp * pp > per_node and pp <= inp.model.layers:
            yield node_tp, pp, pp
