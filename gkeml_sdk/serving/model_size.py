"""Which model a service serves: a catalog model by name, or any other model by its size."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import model_validator

from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.serving import llm_catalog as models
from gkeml_sdk.serving.sizing import ModelShape


class ModelSize(SpecModel):
    """The architecture of a model the catalog does not know (numbers from its config.json).

    Example:
        >>> ModelSize(params_b=13.0, layers=40, attention_heads=40, kv_heads=40,
        ...           head_dim=128).shape.kv_heads
        40

    Attributes:
        params_b: Billions of parameters, all experts included.
        layers: Transformer layers (num_hidden_layers).
        attention_heads: Attention heads (num_attention_heads).
        kv_heads: Key/value heads (num_key_value_heads).
        head_dim: Dimension of a head (head_dim, or hidden_size / num_attention_heads).
        max_context: Longest context (max_position_embeddings); None: not checked.
        kv_latent: MLA models only: kv_lora_rank + qk_rope_head_dim; 0: not MLA.
        gated: The Hub asks for a token to download it.
    """

    params_b: float  # billions of parameters, all experts included
    layers: int  # num_hidden_layers
    attention_heads: int  # num_attention_heads
    kv_heads: int  # num_key_value_heads
    head_dim: int  # head_dim, or hidden_size / num_attention_heads
    max_context: int | None = None  # max_position_embeddings; None: not checked
    kv_latent: int = 0  # MLA only: kv_lora_rank + qk_rope_head_dim
    gated: bool = False  # the Hub asks for a token

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
    row = models.find_model(model)
    if isinstance(size, ModelSize):
        return ResolvedModel(size.shape, model, size.max_context, size.gated, None, False)
    if isinstance(size, str):
        try:
            base = models.llm_model(size)
        except UnknownName as exc:
            raise fail(
                str(exc),
                rule="model_size names a catalog model with the same architecture",
                fix=f"model_size={exc.closest or models.model_names()[0]!r}, or a ModelSize(...)",
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
        unknown = UnknownName("model", model, models.model_names())
        hint = f"did you mean {unknown.closest!r}? " if unknown.closest else ""
        raise fail(
            f"model {model!r} is not in the catalog, so its size is unknown",
            rule="sizing needs parameters, layers, KV heads and head dim",
            fix=f"{hint}pass model_size=ModelSize(params_b=..., layers=..., attention_heads=..., "
            "kv_heads=..., head_dim=...) from its config.json, or model_size='<catalog model "
            f"with the same architecture>'; known: {', '.join(models.model_names())}",
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
