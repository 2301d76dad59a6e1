"""Every "Bad input" of issue 5 is a SpecError at construction, with the numbers and a fix."""

from __future__ import annotations

import pytest

from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.rollout import Autoscaling
from gkeml_sdk.serving.routing import Route, Routing

L70 = "meta-llama/Llama-3.1-70B-Instruct"
QWEN = "Qwen/Qwen2.5-7B-Instruct"


def make(**changes: object) -> ServeModel:
    fields: dict[str, object] = {
        "name": "chat",
        "model": L70,
        "accelerator": Accelerator("h100"),
        "hf_token_secret": "hf-token",
    }
    fields.update(changes)
    return ServeModel(**fields)


def error(**changes: object) -> SpecError:
    with pytest.raises(SpecError) as info:
        make(**changes)
    assert isinstance(info.value, ValueError)
    return info.value


def test_the_base_spec_is_valid():
    assert make().fit is not None


def test_unknown_engine_names_the_closest():
    err = error(engine="vlm")
    assert "unknown engine 'vlm'" in str(err)
    assert err.fix == "engine='vllm'"
    assert err.field == "engine"


def test_pipeline_parallel_with_tgi():
    err = error(engine="tgi", pipeline_parallel=2)
    assert "no pipeline parallelism" in err.rule
    assert "engine='vllm'" in err.fix


def test_tgi_model_too_big_for_one_node_suggests_vllm_across_nodes():
    err = error(engine="tgi", model="meta-llama/Llama-3.1-405B-Instruct")
    assert "needs 812 GB of weights; 8 x H100 have 640 GB" in err.what
    assert "engine='vllm' over 2 nodes (TP8 x PP2)" in err.fix


def test_triton_needs_the_parallelism_its_engine_was_built_with():
    err = error(engine="triton", model_repository="gs://bucket/llama70b")
    assert "tensor_parallel=4, pipeline_parallel=1" in err.fix


def test_tensor_parallel_must_divide_heads():
    err = error(model=QWEN, tensor_parallel=8)
    assert "does not divide the 28 attention heads" in err.what
    assert "[1, 2, 4]" in err.fix


def test_tensor_parallel_stays_in_one_node():
    err = error(tensor_parallel=16)
    assert "nodes of 8 GPU(s)" in err.what
    assert "tensor_parallel=8" in err.fix


def test_parallelism_on_a_mig_slice():
    err = error(model=QWEN, accelerator=Accelerator("h100", mig="3g.40gb"), tensor_parallel=2)
    assert "MIG" in err.what


def test_model_that_does_not_fit_gives_numbers_and_options():
    err = error(accelerator=Accelerator("l4"), tensor_parallel=1)
    assert err.what.startswith(
        "Llama 3.1 70B in bfloat16 needs 141 GB of weights; 1 x L4 has 24 GB"
    )
    assert "21.6 GB usable per GPU" in err.what
    assert err.fix.startswith("options: L4 x8 (TP8)")
    assert "H200 x2 (TP2)" in err.fix
    assert ", or fp8 on " in err.fix
    # Every option it offers really works.
    assert make(accelerator=Accelerator("l4", count=8), tensor_parallel=8).fit is not None
    assert make(accelerator=Accelerator("h200", count=8), tensor_parallel=2).fit is not None


def test_kv_cache_too_small_for_the_context():
    err = error(
        model="mistral-7b", accelerator=Accelerator("l4"), tensor_parallel=1,
        max_model_len=32768, concurrency=8,
    )  # fmt: skip
    assert "leave 5.1 GB per GPU for the KV cache" in err.what
    assert "8 are needed" in err.what
    assert "kv_cache_dtype='fp8'" in err.fix
    assert "max_model_len=4096" in err.fix


def test_old_gpus_and_dtypes():
    err = error(model="mistral-7b", accelerator=Accelerator("t4"))
    assert "compute capability 7.5" in err.what
    assert err.fix.startswith("dtype='float16'")
    assert make(model="mistral-7b", accelerator=Accelerator("t4"), dtype="float16").fit
    assert "compute capability 6.0" in error(accelerator=Accelerator("p100"), dtype="float16").what


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"quantization": "int8"}, "vLLM does not serve quantization='int8'"),
        (
            {
                "engine": "triton", "quantization": "bitsandbytes", "tensor_parallel": 4,
                "pipeline_parallel": 1, "model_repository": "gs://bkt/m",
            },
            "Triton + TensorRT-LLM does not serve quantization='bitsandbytes'",
        ),
        ({"engine": "tgi", "kv_cache_dtype": "fp8", "quantization": "int4"}, "quantization 'int4'"),
        ({"quantization": "awq"}, "needs a checkpoint exported as AWQ"),
    ],
)  # fmt: skip
def test_quantization_the_engine_does_not_support(changes, expected):
    assert expected in str(error(**changes))


def test_int8_works_where_supported_and_awq_with_a_quantized_repo():
    assert make(engine="tgi", quantization="int8").fit.tensor_parallel == 2
    awq = make(
        model="hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4",
        model_size=L70, quantization="awq",
    )  # fmt: skip
    assert awq.fit.weights_gb == pytest.approx(70.6 * 0.54)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"min": 5, "max": 2}, "min=5 is above max=2"),
        ({"min": -1, "max": 2}, "0: to zero, through KEDA"),
        ({"min": 0, "max": 0}, "max .at least 1."),
        ({"max": 2, "queue_depth": 0}, "queue_depth=0.0"),
        ({"max": 3, "queue_depth": 1, "batch_size": 2}, "sets both"),
    ],
)
def test_autoscaling_bounds(kwargs, expected):
    with pytest.raises(SpecError, match=expected):
        Autoscaling(**kwargs)


def test_min_above_max_inside_a_spec_from_yaml():
    text = make(replicas=Autoscaling(min=1, max=2)).to_yaml().replace("max: 2", "max: 2\n  min: 3")
    with pytest.raises(SpecError, match="min=3 is above max=2"):
        ServeModel.from_yaml(text)


def test_gated_model_without_a_token_secret():
    err = error(hf_token_secret=None)
    assert "gated on the Hugging Face Hub" in err.what
    assert "kubectl create secret generic hf-token" in err.fix
    assert make(model=QWEN, hf_token_secret=None).fit  # not gated


def test_unknown_model_needs_its_size():
    err = error(model="meta-llama/Llama-3.1-70B-Instruc")
    assert "did you mean 'meta-llama/Llama-3.1-70B-Instruct'" in err.fix
    assert "ModelSize(" in err.fix


def test_tokens_never_inline():
    assert "never inline" in error(env={"HF_TOKEN": "hf_abc"}).rule


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (
            {"accelerator": Accelerator("l4", sharing="time-sharing", clients_per_gpu=2)},
            "accelerator",
        ),
        ({"engine": "tgi", "routing": Routing(via="inference-gateway")}, "routing"),
        (
            {"routing": Routing(via="istio", routes=[Route(model="m", backends={"b": 1})])},
            "routing",
        ),
        ({"name": "vllm"}, "name"),
        ({"name": "Chat_Bot"}, "name"),
        ({"max_model_len": 200_000}, "max_model_len"),
        ({"extra_args": ["--tensor-parallel-size=2"]}, "extra_args"),
        ({"engine": "tgi", "lora_adapters": {"sql": "org/sql-lora"}}, "lora_adapters"),
        ({"engine": "tgi", "max_batch_size": 64}, "max_batch_size"),
        ({"engine": "triton", "tensor_parallel": 4, "pipeline_parallel": 1}, "model_repository"),
        ({"model_repository": "gs://b/m"}, "model_repository"),
        ({"replicas": -1}, "replicas"),
        ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
        ({"dtype": "float32", "engine": "tgi"}, "dtype"),
        ({"hf_token_secret": "Bad_Secret"}, "hf_token_secret"),
    ],
)
def test_other_bad_input_names_the_field(changes, field):
    err = error(**changes)
    assert err.field == field
    assert err.fix


def test_unknown_fields_are_rejected():
    with pytest.raises(SpecError, match="unknown field 'tensor_paralel'"):
        make(tensor_paralel=4)
