"""`LlmModel`: the row type of the model catalog (one open model's size and attention shape)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LlmModel:
    """One open model's size and attention shape, as sizing needs them.

    Example:
        >>> from gkeml_sdk.serving.llm_catalog import llm_model
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
