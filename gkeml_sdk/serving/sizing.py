"""A served model's size (a catalog row, or `ModelSize` for any other model) and the GPU memory
and tensor/pipeline parallelism it needs: pure arithmetic on those facts.

Over 400 lines because a model's size facts and the arithmetic on them are one calculation.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from pydantic import Field, model_validator

from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.serving import catalog
from gkeml_sdk.serving.catalog import LlmModel
from gkeml_sdk.storage import catalog as storage

# GKE's "Best practices for optimizing LLM inference with GPUs" and vLLM's "Parallelism and
# Scaling" guide. Weights and GPU memory in GB (10^9 bytes, as GPU data sheets count them); KV
# cache per token in bytes.
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


class ModelSize(SpecModel):
    """The architecture of a model the catalog does not know (numbers from its config.json).

    Example:
        >>> ModelSize(params_b=13.0, layers=40, attention_heads=40, kv_heads=40,
        ...           head_dim=128).shape.kv_heads
        40
    """

    params_b: float = Field(description="Billions of parameters, all experts included.")
    layers: int = Field(description="Transformer layers (num_hidden_layers).")
    attention_heads: int = Field(description="Attention heads (num_attention_heads).")
    kv_heads: int = Field(description="Key/value heads (num_key_value_heads).")
    head_dim: int = Field(
        description="Dimension of a head (head_dim, or hidden_size / num_attention_heads)."
    )
    max_context: int | None = Field(
        None, description="Longest context (max_position_embeddings); None: not checked."
    )
    kv_latent: int = Field(
        0, description="MLA models only: kv_lora_rank + qk_rope_head_dim; 0: not MLA."
    )
    gated: bool = Field(False, description="The Hub asks for a token to download it.")

    @model_validator(mode="after")
    def _check(self) -> ModelSize:
        for name in ("layers", "attention_heads", "kv_heads", "head_dim"):
            if getattr(self, name) < 1:
                raise fail(f"ModelSize.{name}={getattr(self, name)}", fix="a positive count")
        if self.params_b <= 0:
            raise fail(f"ModelSize.params_b={self.params_b}", fix="billions, e.g. params_b=13")
        if self.attention_heads % self.kv_heads:
            raise fail(
                f"ModelSize: {self.attention_heads} attention heads are not a multiple of "
                f"{self.kv_heads} KV heads",
                rule="grouped-query attention shares each KV head among equal groups",
                fix="copy num_attention_heads and num_key_value_heads from config.json",
            )
        return self

    @property
    def shape(self) -> ModelShape:
        """What sizing reads."""
        return ModelShape(
            self.params_b,
            self.layers,
            self.attention_heads,
            self.kv_heads,
            self.head_dim,
            self.kv_latent,
        )


@dataclass(frozen=True)
class ResolvedModel:
    """A served model's facts, wherever they came from.

    Example:
        >>> resolve_model("Qwen/Qwen2.5-72B-Instruct", None).display
        'Qwen2.5 72B'
    """

    shape: ModelShape
    display: str
    max_context: int | None
    gated: bool
    checkpoint_quantization: str | None
    in_catalog: bool  # `model` itself is a catalog repo id, i.e. the original weights


def resolve_model(model: str, size: ModelSize | str | None) -> ResolvedModel:
    """Facts of `model`: from `size` when given (a `ModelSize`, or the name of a catalog
    model with the same architecture, e.g. for a fine-tune or a quantized checkpoint),
    else from the catalog. Raises `SpecError` when neither knows it.

    Example:
        >>> r = resolve_model("my-org/llama-70b-ft", "llama-3.1-70b")
        >>> r.shape.layers, r.in_catalog
        (80, False)
    """
    row = catalog.find_model(model)
    if isinstance(size, ModelSize):
        return ResolvedModel(size.shape, model, size.max_context, size.gated, None, False)
    if isinstance(size, str):
        try:
            base = catalog.llm_model(size)
        except UnknownName as exc:
            raise fail(
                str(exc),
                rule="model_size names a catalog model with the same architecture",
                fix=f"model_size={exc.closest or catalog.model_names()[0]!r}, or a ModelSize(...)",
                field="model_size",
            ) from None
        # A fine-tune or re-quantized copy lives in another repo: its gating is its own.
        return ResolvedModel(
            ModelShape.of(base),
            f"{model} ({base.display} architecture)",
            base.max_context,
            bool(row and row.gated),
            base.checkpoint_quantization if row is base else None,
            row is base,
        )
    if row is None:
        unknown = UnknownName("model", model, catalog.model_names())
        hint = f"did you mean {unknown.closest!r}? " if unknown.closest else ""
        raise fail(
            f"model {model!r} is not in the catalog, so its size is unknown",
            rule="sizing needs parameters, layers, KV heads and head dim",
            fix=f"{hint}pass model_size=ModelSize(params_b=..., layers=..., attention_heads=..., "
            "kv_heads=..., head_dim=...) from its config.json, or model_size='<catalog model "
            f"with the same architecture>'; known: {', '.join(catalog.model_names())}",
            field="model",
        )
    return ResolvedModel(
        ModelShape.of(row),
        row.display,
        row.max_context,
        row.gated,
        row.checkpoint_quantization,
        True,
    )
