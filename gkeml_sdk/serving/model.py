"""`ServeModel`: an LLM served on GKE, sized to its GPUs and checked against the engine and
the hardware at construction."""

from __future__ import annotations

from pydantic import model_validator

from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.hardware.dra import refuse_for_serving
from gkeml_sdk.pricing.catalog import PriceBook, PriceOverrides
from gkeml_sdk.serving import hardware_rules, rules
from gkeml_sdk.serving.fields import ServeFields
from gkeml_sdk.serving.manifests import compile_serve
from gkeml_sdk.serving.plan import ServePlan, build_plan
from gkeml_sdk.serving.server_pod import cache_size


class ServeModel(ServeFields):
    """A model server: engine, model, GPUs, replicas, and optional routing.

    `tensor_parallel="auto"` picks the smallest GPU count per replica whose memory holds the
    weights plus a KV cache for `concurrency` (default 2) sequences of `max_model_len`
    tokens, and spreads over nodes (vLLM pipeline parallelism) only when one node is too
    small. The accelerator names the GPU model; its `count` (or `machine_type`) bounds the
    GPUs of one node, and the default `count=1` means any machine of that GPU. Explicit
    `tensor_parallel` x `pipeline_parallel` fix the GPUs of each pod (x PP pods when that
    exceeds one node).

    Example:
        >>> from gkeml_sdk import Accelerator, Autoscaling
        >>> svc = ServeModel(name="chat", model="meta-llama/Llama-3.1-70B-Instruct",
        ...                  accelerator=Accelerator("h100"), max_model_len=8192,
        ...                  replicas=Autoscaling(min=1, max=4, queue_depth=5),
        ...                  hf_token_secret="hf-token")
        >>> fit = svc.fit
        >>> fit.tensor_parallel, fit.pipeline_parallel, fit.gpus_per_pod
        (4, 1, 4)
    """

    @model_validator(mode="after")
    def _check(self) -> ServeModel:
        rules.check_names(self)
        self.resolved  # noqa: B018 - an unknown model fails here, before options that need it
        rules.check_engine_options(self)
        hardware_rules.check_accelerator(self)
        refuse_for_serving(self.accelerator)
        hardware_rules.check_parallelism(self)
        hardware_rules.check_context(self)
        if self.fit is None:
            raise hardware_rules.does_not_fit(self)
        hardware_rules.check_max_gpus(self)
        rules.check_rollout(self)
        rules.check_spot_mix(self)
        rules.check_deployment(self)
        self.network_choice  # noqa: B018 - network='gpudirect' fails here where GKE cannot
        rules.check_weights(self)
        rules.check_serving_env(self)  # after the engine's own env rules, which say more
        return self

    def plan(self, prices: PriceBook | PriceOverrides | str | None = None) -> ServePlan:
        """GPUs per replica, TP/PP, weights and KV budget per GPU, concurrency, cost per hour."""
        return build_plan(self, prices)

    @property
    def ephemeral_storage(self) -> str | None:
        """Ephemeral storage each server pod requests: the node-local cache it downloads the
        weights to (None with `weights=` or an engine that downloads nothing). The node pool
        must offer it: `NodePool.for_accelerator(svc.accelerator, name=...,
        ephemeral_storage=svc.ephemeral_storage)`.

        Example:
            >>> from gkeml_sdk import Accelerator
            >>> ServeModel(name="big", model="meta-llama/Llama-3.1-70B-Instruct",
            ...            accelerator=Accelerator("h100", count=8),
            ...            hf_token_secret="hf-token").ephemeral_storage
            '145Gi'
        """
        fit = self.fit
        return cache_size(self, fit) if fit is not None else None

    def compile(self) -> Manifests:
        """The Kubernetes objects that serve this model (`gkeml_sdk.serving.manifests`)."""
        return compile_serve(self)

    def __repr__(self) -> str:
        sized = hardware_rules.scale_up_sentence(self)
        return (
            f"ServeModel({self.name!r}, engine={self.engine!r}, model={self.model!r}, "
            f"accelerator={self.accelerator!r})" + (f"  # {sized}" if sized else "")
        )

    __str__ = __repr__

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self.plan()))}</pre>"
