"""`ServeModel`: an LLM served on GKE, sized to its GPUs and checked against the engine and
the hardware at construction."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.core.secret_ref import SecretRef
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.dra import refuse_for_serving
from gkeml_sdk.hardware.network import NetworkChoice, NetworkMode, choose_network
from gkeml_sdk.serving import catalog as engines
from gkeml_sdk.serving import hardware_rules as serve_hardware
from gkeml_sdk.serving import rules as serve_checks
from gkeml_sdk.serving import weight_formats
from gkeml_sdk.serving.autoscaling import Autoscaling
from gkeml_sdk.serving.engine_row import DEFAULT_TOKEN_KEY, Engine
from gkeml_sdk.serving.misfit import does_not_fit
from gkeml_sdk.serving.model_size import ModelSize, ResolvedModel, resolve_model
from gkeml_sdk.serving.rollout import Rollout, check_rollout
from gkeml_sdk.serving.routing import Routing
from gkeml_sdk.serving.scale_up import check_max_gpus, scale_up_sentence
from gkeml_sdk.serving.server_env import check_serving_env
from gkeml_sdk.serving.sizing import MIN_SEQUENCES, Fit, SizingInput, choose
from gkeml_sdk.serving.spot_mix import SpotMix, check_spot_mix
from gkeml_sdk.serving.weights import check_weights
from gkeml_sdk.storage.volumes import WeightsVolume

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.pricing.catalog import PriceBook, PriceOverrides
    from gkeml_sdk.serving.plan import ServePlan

DEFAULT_MAX_MODEL_LEN = 8192
Dtype = Literal["bfloat16", "float16", "float32"]


class ServeModel(SpecModel):
    """A model server: engine, model, GPUs, replicas, and optional routing.

    `tensor_parallel="auto"` picks the smallest GPU count per replica whose memory holds the
    weights plus a KV cache for `concurrency` (default 2) sequences of `max_model_len`
    tokens, and spreads over nodes (vLLM pipeline parallelism) only when one node is too
    small. The accelerator names the GPU model; its `count` (or `machine_type`) bounds the
    GPUs of one node, and the default `count=1` means any machine of that GPU. Explicit
    `tensor_parallel` x `pipeline_parallel` fix the GPUs of each pod (x PP pods when that
    exceeds one node).

    Example:
        >>> svc = ServeModel(name="chat", model="meta-llama/Llama-3.1-70B-Instruct",
        ...                  accelerator=Accelerator("h100"), max_model_len=8192,
        ...                  replicas=Autoscaling(min=1, max=4, queue_depth=5),
        ...                  hf_token_secret="hf-token")
        >>> fit = svc.fit
        >>> fit.tensor_parallel, fit.pipeline_parallel, fit.gpus_per_pod
        (4, 1, 4)
    """

    name: str
    model: str
    accelerator: Accelerator
    engine: str = "vllm"
    tensor_parallel: int | Literal["auto"] = "auto"
    pipeline_parallel: int | Literal["auto"] = "auto"
    max_model_len: int | None = None  # default: the model's context, at most 8192
    concurrency: int | None = None  # full-length sequences the KV cache must hold; default 2
    dtype: Dtype = "bfloat16"
    quantization: str | None = None
    kv_cache_dtype: Literal["auto", "fp8"] = "auto"
    gpu_memory_utilization: float = 0.9
    model_size: ModelSize | str | None = None
    served_model_name: str | None = None
    prefix_caching: bool = True
    max_batch_size: int | None = None  # vLLM --max-num-seqs; default 256
    lora_adapters: dict[str, str] = Field(default_factory=dict)  # name -> repo id or path
    max_lora_rank: int = 16
    replicas: int | Autoscaling = 1
    hf_token_secret: str | None = None
    hf_token_key: str = DEFAULT_TOKEN_KEY
    image: str | None = None  # default: the engine's pinned image
    model_repository: str | None = None  # Triton: gs://BUCKET/PATH, pvc://CLAIM/PATH or a path
    weights: WeightsVolume | None = None  # the model's files on a volume instead of the Hub
    extra_args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    secret_env: dict[str, SecretRef] = Field(default_factory=dict)  # env name -> Secret key
    not_secret: list[str] = Field(default_factory=list)  # env names that only look secret
    namespace: str = "default"
    queue: str | None = None  # Kueue LocalQueue; None: not managed by Kueue
    priority_class: str | None = None  # Kubernetes PriorityClass of the pods
    service_account: str | None = None
    spot: bool | SpotMix = False  # SpotMix: an on-demand floor plus autoscaled Spot replicas
    max_gpus: int | None = None  # refuse plans whose replica needs more GPUs
    rollout: Rollout = Field(default_factory=Rollout)  # how update() moves to a new version
    routing: Routing | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    startup_timeout_seconds: int | None = None  # default: from the weight size
    longest_request_seconds: int = 60  # drives the graceful drain
    network: NetworkMode = "auto"  # multi-node replicas: the machine's GPUDirect stack

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        try:
            return engines.engine(value).key
        except UnknownName as exc:
            raise fail(
                str(exc),
                rule="ServeModel compiles vLLM, TGI and Triton (TensorRT-LLM) servers",
                fix=f"engine={exc.closest or 'vllm'!r}",
                field="engine",
            ) from None

    @model_validator(mode="after")
    def _check(self) -> ServeModel:
        serve_checks.check_names(self)
        self.resolved  # noqa: B018 - an unknown model fails here, before options that need it
        serve_checks.check_engine_options(self)
        serve_hardware.check_accelerator(self)
        refuse_for_serving(self.accelerator)
        serve_hardware.check_parallelism(self)
        serve_hardware.check_context(self)
        if self.fit is None:
            raise does_not_fit(self)
        check_max_gpus(self)
        check_rollout(self)
        check_spot_mix(self)
        serve_checks.check_deployment(self)
        self.network_choice  # noqa: B018 - network='gpudirect' fails here where GKE cannot
        check_weights(self)
        check_serving_env(self)  # after the engine's own env rules, which say more
        return self

    @property
    def network_choice(self) -> NetworkChoice:
        """The networking stack of each replica's pods (None: plain pod networking)."""
        fit = self.fit
        pods, gpus = (fit.pods, fit.gpus_per_pod) if fit is not None else (1, None)
        return choose_network(self.accelerator, pods, self.network, gpus)

    @property
    def engine_row(self) -> Engine:
        """The catalog row of the engine."""
        return engines.engine(self.engine)

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
            return weight_formats.weight_format(quant).bytes_per_param
        return weight_formats.DTYPE_BYTES[self.dtype]

    @property
    def min_compute_capability(self) -> float:
        """The CUDA compute capability the engine, dtype and quantization need together."""
        needs = [
            self.engine_row.min_compute_capability,
            weight_formats.DTYPE_MIN_COMPUTE[self.dtype],
        ]
        if self.weight_quantization is not None:
            needs.append(weight_formats.weight_format(self.weight_quantization).min_compute)
        return max(needs)

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached K or V value."""
        return (
            weight_formats.KV_CACHE_BYTES[self.kv_cache_dtype]
            or weight_formats.DTYPE_BYTES[self.dtype]
        )

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

    def plan(self, prices: PriceBook | PriceOverrides | str | None = None) -> ServePlan:
        """GPUs per replica, TP/PP, weights and KV budget per GPU, concurrency, cost per hour."""
        from gkeml_sdk.serving.plan import build_plan

        return build_plan(self, prices)

    def compile(self) -> Manifests:
        """The Kubernetes objects that serve this model (`gkeml_sdk.serving.manifests`)."""
        from gkeml_sdk.serving.manifests import compile_serve

        return compile_serve(self)

    def with_changes(self, **changes: Any) -> ServeModel:
        """A validated copy with some fields replaced."""
        return ServeModel.model_validate({**self.model_dump(), **changes})

    def __repr__(self) -> str:
        sized = scale_up_sentence(self)
        return (
            f"ServeModel({self.name!r}, engine={self.engine!r}, model={self.model!r}, "
            f"accelerator={self.accelerator!r})" + (f"  # {sized}" if sized else "")
        )

    __str__ = __repr__

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self.plan()))}</pre>"


# The fields' meanings, for help() and the API reference; kept beside to keep this file short.
from gkeml_sdk.serving.serve_fields import ATTRIBUTES  # noqa: E402

ServeModel.__doc__ = f"{ServeModel.__doc__}{ATTRIBUTES}"
