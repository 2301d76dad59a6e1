"""`ServeFields`: every field of a `ServeModel` with its meaning, and the facts derived from
them (engine row, model size, memory fit); the checks and builders read a spec through it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal, Self

from pydantic import Field, field_validator

from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.core.secret_ref import SecretRef
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.network import NetworkChoice, NetworkMode, choose_network
from gkeml_sdk.serving import catalog
from gkeml_sdk.serving.catalog import DEFAULT_TOKEN_KEY, Engine
from gkeml_sdk.serving.rollout import Autoscaling, Rollout, SpotMix
from gkeml_sdk.serving.routing import Routing
from gkeml_sdk.serving.sizing import (
    MIN_SEQUENCES,
    Fit,
    ModelSize,
    ResolvedModel,
    SizingInput,
    choose,
    resolve_model,
)
from gkeml_sdk.storage.volumes import WeightsVolume

DEFAULT_MAX_MODEL_LEN = 8192
Dtype = Literal["bfloat16", "float16", "float32"]


class ServeFields(SpecModel):
    """The fields of a `ServeModel` and what they imply; `ServeModel` adds the checks that
    read several of them, `plan()` and `compile()`."""

    name: str = Field(
        description="The server's name (a DNS label); its Service and Deployment carry it."
    )
    model: str = Field(description="Hugging Face repo id (or catalog name) of the model to serve.")
    accelerator: Accelerator = Field(
        description="The GPU model; its `count` (or `machine_type`) bounds one node's GPUs, and "
        "the default `count=1` means any machine of that GPU."
    )
    engine: str = Field("vllm", description='Serving engine: "vllm", "tgi" or "triton".')
    tensor_parallel: int | Literal["auto"] = Field(
        "auto", description='GPUs a replica splits each layer over; "auto" sizes it from memory.'
    )
    pipeline_parallel: int | Literal["auto"] = Field(
        "auto",
        description='Pipeline stages (nodes) of a replica; "auto" uses one node if it can.',
    )
    max_model_len: int | None = Field(
        None, description="Longest sequence in tokens; None: the model's context, at most 8192."
    )
    concurrency: int | None = Field(
        None, description="Full-length sequences the KV cache must hold; None means 2."
    )
    dtype: Dtype = Field(
        "bfloat16", description='Weight and activation type: "bfloat16", "float16" or "float32".'
    )
    quantization: str | None = Field(
        None,
        description='Weight quantization the engine applies (e.g. "awq", "fp8"); None: none.',
    )
    kv_cache_dtype: Literal["auto", "fp8"] = Field(
        "auto", description='KV cache type: "auto" (the model\'s dtype) or "fp8".'
    )
    gpu_memory_utilization: float = Field(
        0.9, description="Share of each GPU's memory the engine may use (0-1]."
    )
    model_size: ModelSize | str | None = Field(
        None,
        description="Size facts for a model the catalog lacks: `ModelSize(...)` or a catalog name.",
    )
    served_model_name: str | None = Field(
        None, description="The name clients request; None: the model id."
    )
    prefix_caching: bool = Field(
        True, description="Reuse the KV cache of shared prompt prefixes (vLLM)."
    )
    max_batch_size: int | None = Field(
        None, description="Sequences batched at once (vLLM --max-num-seqs); None means 256."
    )
    lora_adapters: dict[str, str] = Field(
        default_factory=dict, description="LoRA adapters to load: name -> repo id or path."
    )
    max_lora_rank: int = Field(16, description="Largest LoRA rank the engine reserves memory for.")
    replicas: int | Autoscaling = Field(
        1, description="Fixed replica count (0 stops the service), or `Autoscaling(...)`."
    )
    hf_token_secret: str | None = Field(
        None, description="Kubernetes Secret holding the Hugging Face token (gated models)."
    )
    hf_token_key: str = Field(
        DEFAULT_TOKEN_KEY, description="Key of the token inside `hf_token_secret`."
    )
    image: str | None = Field(None, description="Server image; None: the engine's pinned image.")
    model_repository: str | None = Field(
        None,
        description="Triton's model repository: gs://BUCKET/PATH, pvc://CLAIM/PATH or a path.",
    )
    weights: WeightsVolume | None = Field(
        None,
        description="A volume holding the model's files, instead of downloading from the Hub.",
    )
    extra_args: list[str] = Field(
        default_factory=list, description="Extra command-line arguments passed to the engine."
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="Environment variables of the server container."
    )
    secret_env: dict[str, SecretRef] = Field(
        default_factory=dict,
        description='Variables read from Kubernetes Secrets: name -> SecretRef or "SECRET/KEY".',
    )
    not_secret: list[str] = Field(
        default_factory=list,
        description="Variable names in `env` that only look secret, allowed in plain text.",
    )
    namespace: str = Field("default", description="Kubernetes namespace of the server.")
    queue: str | None = Field(
        None, description="Kueue LocalQueue that admits the replicas; None: not managed by Kueue."
    )
    priority_class: str | None = Field(None, description="Kubernetes PriorityClass of the pods.")
    service_account: str | None = Field(None, description="Kubernetes service account of the pods.")
    spot: bool | SpotMix = Field(
        False,
        description="Run replicas on Spot VMs, or `SpotMix(...)`: an on-demand floor plus "
        "autoscaled Spot replicas.",
    )
    max_gpus: int | None = Field(
        None, description="Refuse plans whose replica needs more GPUs than this."
    )
    rollout: Rollout = Field(
        default_factory=Rollout,
        description="How `update()` moves to a new version: `Rollout(...)` (surge or canary).",
    )
    routing: Routing | None = Field(
        None,
        description="Traffic split and gateway routes: `Routing(...)`; None: one Service only.",
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="Labels added to the server's objects and pods."
    )
    startup_timeout_seconds: int | None = Field(
        None, description="Time a replica gets to load; None: derived from weight size."
    )
    longest_request_seconds: int = Field(
        60, description="Longest request in flight; drives the graceful drain."
    )
    network: NetworkMode = Field(
        "auto",
        description="Multi-node replicas' networking: \"auto\" takes the machine's GPUDirect "
        "stack.",
    )

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        try:
            return catalog.engine(value).key
        except UnknownName as exc:
            raise fail(
                str(exc),
                rule="ServeModel compiles vLLM, TGI and Triton (TensorRT-LLM) servers",
                fix=f"engine={exc.closest or 'vllm'!r}",
                field="engine",
            ) from None

    @property
    def network_choice(self) -> NetworkChoice:
        """The networking stack of each replica's pods (None: plain pod networking)."""
        fit = self.fit
        pods, gpus = (fit.pods, fit.gpus_per_pod) if fit is not None else (1, None)
        return choose_network(self.accelerator, pods, self.network, gpus)

    @property
    def engine_row(self) -> Engine:
        """The catalog row of the engine."""
        return catalog.engine(self.engine)

    @property
    def resolved(self) -> ResolvedModel:
        """The model's architecture facts (catalog or `model_size`)."""
        return resolve_model(self.model, self.model_size)

    @property
    def weight_quantization(self) -> str | None:
        """The quantization of the served weights: the one asked for, else the checkpoint's."""
        return self.quantization or self.resolved.checkpoint_quantization

    @property
    def weight_bytes(self) -> float:
        """Bytes per parameter of the served weights."""
        quant = self.weight_quantization
        if quant is not None:
            return catalog.weight_format(quant).bytes_per_param
        return catalog.DTYPE_BYTES[self.dtype]

    @property
    def min_compute_capability(self) -> float:
        """The CUDA compute capability the engine, dtype and quantization need together."""
        needs = [self.engine_row.min_compute_capability, catalog.DTYPE_MIN_COMPUTE[self.dtype]]
        if self.weight_quantization is not None:
            needs.append(catalog.weight_format(self.weight_quantization).min_compute)
        return max(needs)

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached K or V value."""
        return catalog.KV_CACHE_BYTES[self.kv_cache_dtype] or catalog.DTYPE_BYTES[self.dtype]

    @property
    def context_length(self) -> int:
        """`max_model_len`, or its default: the model's context, at most 8192 tokens."""
        if self.max_model_len is not None:
            return self.max_model_len
        return min(DEFAULT_MAX_MODEL_LEN, self.resolved.max_context or DEFAULT_MAX_MODEL_LEN)

    @property
    def gpus_per_node(self) -> int:
        """The most GPUs one pod may use: the node's, or 1 for a MIG slice."""
        acc = self.accelerator
        if acc.mig is not None:
            return 1
        if acc.machine_type is not None or acc.count > 1:
            return acc.node_machine.gpus
        return acc.gpu.max_gpus_per_node

    def sizing_input(self, **changes: Any) -> SizingInput:
        """The sizing question this spec asks (see `gkeml_sdk.serving.sizing`)."""
        acc, eng = self.accelerator, self.engine_row
        tp, pp = self.tensor_parallel, self.pipeline_parallel
        inp = SizingInput(
            model=self.resolved.shape,
            weight_bytes=self.weight_bytes,
            kv_bytes=self.kv_bytes,
            gpu_memory_gb=acc.gpu_memory_gb / acc.count,
            gpus_per_node=self.gpus_per_node,
            utilization=self.gpu_memory_utilization,
            max_model_len=self.context_length,
            sequences=self.concurrency or MIN_SEQUENCES,
            tensor_parallel=None if tp == "auto" else tp,
            pipeline_parallel=None if pp == "auto" else pp,
            multi_host=eng.multi_host is not None and acc.mig is None,
            pipeline=eng.pipeline_parallel,
        )
        return replace(inp, **changes)

    @property
    def fit(self) -> Fit | None:
        """The chosen parallel shape and its memory per GPU, or None when nothing fits."""
        return choose(self.sizing_input())

    @property
    def min_replicas(self) -> int:
        """Replicas that always run."""
        return self.replicas.min if isinstance(self.replicas, Autoscaling) else self.replicas

    @property
    def max_replicas(self) -> int:
        """Replicas at peak."""
        return self.replicas.max if isinstance(self.replicas, Autoscaling) else self.replicas

    @property
    def spot_mix(self) -> SpotMix | None:
        """The on-demand floor and Spot part, when `spot` is a `SpotMix`."""
        return self.spot if isinstance(self.spot, SpotMix) else None

    @property
    def autoscaling(self) -> Autoscaling | None:
        """The HPA settings, when replicas autoscale."""
        return self.replicas if isinstance(self.replicas, Autoscaling) else None

    @property
    def model_name(self) -> str:
        """The name clients put in a request's `model` field."""
        return self.served_model_name or self.model

    def with_changes(self, **changes: Any) -> Self:
        """A validated copy with some fields replaced."""
        return type(self).model_validate({**self.model_dump(), **changes})
