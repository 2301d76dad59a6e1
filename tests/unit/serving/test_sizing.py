"""Sizing against the numbers of serving-and-tenancy §4.1 (memory) and §4.2 (TP/PP choices)."""

from __future__ import annotations

import pytest

from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.serving.catalog import DTYPE_BYTES, llm_model, weight_format
from gkeml_sdk.serving.hardware_rules import alternatives
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.sizing import (
    ModelShape,
    SizingInput,
    choose,
    evaluate,
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    startup_seconds,
    valid_tensor_parallel,
)

KIB, GIB = 1024, 2**30


def serve(model: str, gpu: str, count: int = 1, **kw: object) -> ServeModel:
    return ServeModel(
        name="s", model=model, accelerator=Accelerator(gpu, count=count), hf_token_secret="hf", **kw
    )


# §4.1 table: model, KV/token in bf16 (KiB), one 8k-token sequence (GiB)
KV_TABLE = [
    ("meta-llama/Llama-3.1-8B-Instruct", 128, 1.0),
    ("mistralai/Mistral-7B-Instruct-v0.3", 128, 1.0),
    ("Qwen/Qwen2.5-7B-Instruct", 56, 0.44),
    ("google/gemma-2-9b-it", 336, 2.6),
    ("meta-llama/Llama-3.1-70B-Instruct", 320, 2.5),
    ("meta-llama/Llama-3.1-405B-Instruct", 504, 3.9),
    ("llama-2-7b", 512, 4.0),  # no grouped-query attention: 32 K/V heads
    ("tiny-llama-1b", 22, 0.17),
]


@pytest.mark.parametrize(("model", "kib", "gib_8k"), KV_TABLE)
def test_kv_cache_per_token_matches_the_reference_table(model, kib, gib_8k):
    shape = shape_of(model)
    per_token = kv_bytes_per_token(shape, 2.0)
    assert per_token == kib * KIB
    assert per_token * 8192 / GIB == pytest.approx(gib_8k, abs=0.05)


def test_mla_caches_one_latent_per_layer():
    # DeepSeek-R1: 61 x (512 + 64) x 2 B ~ 69 KiB per token, no K/V factor, no heads.
    shape = shape_of("deepseek-ai/DeepSeek-R1")
    assert kv_bytes_per_token(shape, 2.0) == 61 * 576 * 2
    assert kv_bytes_per_token(shape, 2.0) / KIB == pytest.approx(69, abs=0.5)
    # The latent is replicated on every TP rank; PP splits the layers.
    assert kv_bytes_per_token_per_gpu(shape, 2.0, 8, 1) == 61 * 576 * 2
    assert kv_bytes_per_token_per_gpu(shape, 2.0, 8, 2) == 31 * 576 * 2


@pytest.mark.parametrize(
    ("dtype", "quant", "expected"),
    [
        ("float32", None, (32, 280, 1620)),
        ("bfloat16", None, (16, 140, 810)),
        ("float16", None, (16, 140, 810)),
        ("bfloat16", "fp8", (8, 70, 405)),
        ("bfloat16", "int8", (8, 70, 405)),
    ],
)
def test_weight_bytes_match_the_reference_table(dtype, quant, expected):
    per_param = weight_format(quant).bytes_per_param if quant else DTYPE_BYTES[dtype]
    assert tuple(round(b * per_param) for b in (8, 70, 405)) == expected


@pytest.mark.parametrize("quant", ["awq", "gptq", "bitsandbytes-nf4"])
def test_int4_weights_include_scales(quant):
    per_param = weight_format(quant).bytes_per_param
    # §4.1: 4-4.5 GB for 8B, 35-38 GB for 70B, ~203-220 GB for 405B.
    assert 4 <= 8 * per_param <= 4.5
    assert 35 <= 70 * per_param <= 38
    assert 203 <= 405 * per_param <= 220


def test_kv_splits_over_tensor_parallel_until_heads_run_out():
    shape = ModelShape(7.6, 28, 28, 4, 128)
    one = kv_bytes_per_token_per_gpu(shape, 2.0, 1, 1)
    assert kv_bytes_per_token_per_gpu(shape, 2.0, 4, 1) == one / 4
    # 8 ranks, 4 KV heads: each rank still holds a whole head.
    assert kv_bytes_per_token_per_gpu(shape, 2.0, 8, 1) == one / 4


def test_tensor_parallel_divides_heads_and_stays_in_a_node():
    assert valid_tensor_parallel(shape_of("Qwen/Qwen2.5-7B-Instruct"), 8) == [1, 2, 4]
    # 24 heads on a 16-GPU a2-megagpu node: TP16 would split heads unevenly.
    assert valid_tensor_parallel(shape_of("meta-llama/Llama-3.2-3B-Instruct"), 16) == [
        1,
        2,
        4,
        8,
    ]
    assert valid_tensor_parallel(shape_of("meta-llama/Llama-3.1-70B-Instruct"), 4) == [1, 2, 4]


# §4.2 rule 4 examples, as (model, GPU, options) -> (TP, PP, pods per replica)
EXAMPLES = [
    ("meta-llama/Llama-3.1-8B-Instruct", "l4", {"max_model_len": 4096}, (1, 1, 1)),
    ("meta-llama/Llama-3.1-8B-Instruct", "a100-40gb", {}, (1, 1, 1)),
    ("meta-llama/Llama-3.1-70B-Instruct", "h100", {}, (4, 1, 1)),
    ("meta-llama/Llama-3.1-70B-Instruct", "h200", {}, (2, 1, 1)),
    ("meta-llama/Llama-3.1-70B-Instruct", "h100", {"quantization": "fp8"}, (2, 1, 1)),
    ("meta-llama/Llama-3.1-405B-Instruct", "h100", {"quantization": "fp8"}, (8, 1, 1)),
    ("meta-llama/Llama-3.1-405B-Instruct", "h100", {}, (8, 2, 2)),
    ("deepseek-ai/DeepSeek-R1", "h100", {}, (8, 2, 2)),
    ("deepseek-ai/DeepSeek-R1", "h200", {}, (8, 1, 1)),
]


@pytest.mark.parametrize(("model", "gpu", "options", "shape"), EXAMPLES)
def test_reference_examples_choose_the_same_shape(model, gpu, options, shape):
    count = 8 if gpu == "h200" else 1  # H200 only comes 8 to a machine
    fit = serve(model, gpu, count, **options).fit
    assert (fit.tensor_parallel, fit.pipeline_parallel, fit.pods) == shape


def test_70b_on_h100_numbers():
    fit = serve("meta-llama/Llama-3.1-70B-Instruct", "h100", max_model_len=8192).fit
    assert fit.weights_gb == pytest.approx(141.2)
    assert fit.usable_gb == pytest.approx(72.0)
    assert fit.weights_gb_per_gpu == pytest.approx(35.3)
    assert fit.kv_gb_per_gpu == pytest.approx(34.7)
    assert fit.kv_bytes_per_token_per_gpu == 320 * KIB / 4
    assert fit.kv_tokens == int(34.7e9 // (80 * KIB))
    assert fit.max_concurrency == pytest.approx(51.7, abs=0.05)


def test_70b_tp2_on_h100_does_not_fit():
    # §4.2: 70 GB of weights per GPU against a ~72 GB budget leaves no room for KV cache.
    shape = ModelShape(70.0, 80, 64, 8, 128)
    fit = evaluate(SizingInput(shape, 2.0, 2.0, 80, 8, 0.9, 8192), 2, 1, 1)
    assert fit.weights_gb_per_gpu == 70.0
    assert fit.usable_gb == pytest.approx(72.0)
    assert not fit.fits


def test_70b_tp2_on_h200_leaves_about_55_gb_for_kv():
    fit = evaluate(
        SizingInput(ModelShape(70.0, 80, 64, 8, 128), 2.0, 2.0, 141, 8, 0.9, 8192), 2, 1, 1
    )
    assert fit.kv_gb_per_gpu == pytest.approx(55, abs=0.5)


def test_longer_context_or_more_concurrency_needs_more_gpus():
    base = serve("meta-llama/Llama-3.1-8B-Instruct", "l4", max_model_len=8192).fit
    longer = serve("meta-llama/Llama-3.1-8B-Instruct", "l4", max_model_len=32768).fit
    busier = serve("meta-llama/Llama-3.1-8B-Instruct", "l4", max_model_len=8192, concurrency=8).fit
    assert base.tensor_parallel == 1
    assert longer.tensor_parallel == 2
    assert busier.tensor_parallel == 2
    assert longer.max_concurrency < base.max_concurrency * 2


def test_fp8_kv_cache_doubles_tokens():
    plain = serve("meta-llama/Llama-3.1-70B-Instruct", "h100").fit
    fp8 = serve("meta-llama/Llama-3.1-70B-Instruct", "h100", kv_cache_dtype="fp8").fit
    assert abs(fp8.kv_tokens - 2 * plain.kv_tokens) <= 1  # integer division of each


def test_explicit_pipeline_parallel_in_one_node_uses_tp_x_pp_gpus():
    fit = serve(
        "meta-llama/Llama-3.1-70B-Instruct", "h100", tensor_parallel=2, pipeline_parallel=2
    ).fit
    assert (fit.gpus_per_pod, fit.pods, fit.multi_host) == (4, 1, False)


def test_accelerator_count_bounds_the_node():
    # Only 2 GPUs per node: 70B bf16 spreads over nodes instead of using 4 in one.
    fit = serve("meta-llama/Llama-3.1-70B-Instruct", "h100", count=2, spot=True).fit
    assert (fit.tensor_parallel, fit.pipeline_parallel, fit.pods) == (2, 2, 2)


def test_nothing_fits_returns_none():
    shape = ModelShape(405.0, 126, 128, 8, 128)
    assert choose(SizingInput(shape, 4.0, 4.0, 24, 8, 0.9, 8192, multi_host=False)) is None


def test_alternatives_put_the_same_gpu_first_then_cheapest_then_fp8():
    shape = ModelShape(70.0, 80, 64, 8, 128)
    inp = SizingInput(shape, 2.0, 2.0, 24, 8, 0.9, 8192, tensor_parallel=1)
    options = alternatives(inp, "l4", fp8_bytes=1.0)
    assert options[0] == "L4 x8 (TP8)"
    assert "H200 x2 (TP2)" in options
    assert options[-1].startswith("fp8 on ")
    assert alternatives(inp, "l4", fp8_bytes=None)[-1].startswith("fp8") is False


def test_startup_budget_grows_with_weights():
    assert startup_seconds(16) == 600
    assert startup_seconds(141.2) == 900
    assert startup_seconds(811.8) > 3000
    assert startup_seconds(811.8, None) == 600


def shape_of(name: str) -> ModelShape:
    return ModelShape.of(llm_model(name))
