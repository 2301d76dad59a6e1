"""Open LLMs known by name: architecture facts from each model's `config.json` (the bytes of
each weight format, from GKE's "Best practices for optimizing LLM inference with GPUs", are in
`weight_formats`).

Adding a model is one `LlmModel(...)` row below plus a test row.
"""

from __future__ import annotations

from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.serving.llm_row import LlmModel

__all__ = ["MODELS", "LlmModel", "find_model", "llm_model", "model_names"]


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


def _index() -> dict[str, LlmModel]:
    table: dict[str, LlmModel] = {}
    for row in MODELS:
        for name in (*row.ids, *row.aliases):
            table[name.lower()] = row
    return table


_BY_NAME = _index()


def find_model(name: str) -> LlmModel | None:
    """The catalog row for a repo id or alias (case-insensitive), or None.

    Example:
        >>> find_model("Qwen/Qwen2.5-7B-Instruct").kv_heads
        4
        >>> find_model("my-org/my-model") is None
        True
    """
    return _BY_NAME.get(name.strip().lower())


def llm_model(name: str) -> LlmModel:
    """Like `find_model`, but raises `UnknownName` with the closest known model.

    Example:
        >>> llm_model("mistral-7b").display
        'Mistral 7B v0.3'
    """
    row = find_model(name)
    if row is None:
        raise UnknownName("model", name, model_names(), _BY_NAME.keys())
    return row


def model_names() -> list[str]:
    """Canonical repo ids of every catalog model, in catalog order.

    Example:
        >>> "deepseek-ai/DeepSeek-R1" in model_names()
        True
    """
    return [row.key for row in MODELS]
