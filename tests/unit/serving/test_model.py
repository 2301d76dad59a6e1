"""ServeModel as users see it: the issue's example, plan(), YAML round trips, defaults."""

from __future__ import annotations

import pytest

from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.pricing.catalog import PriceBook
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.rollout import Autoscaling
from gkeml_sdk.serving.routing import Route, Routing
from gkeml_sdk.serving.sizing import ModelSize

H100_ON_DEMAND, H100_SPOT = 9.79655, 2.9926


def issue_example(**changes: object) -> ServeModel:
    fields: dict[str, object] = dict(
        name="chat", engine="vllm", model="meta-llama/Llama-3.1-70B-Instruct",
        accelerator=Accelerator("h100"), tensor_parallel="auto", max_model_len=8192,
        replicas=Autoscaling(min=1, max=4, queue_depth=5), hf_token_secret="hf-token",
    )  # fmt: skip
    fields.update(changes)
    return ServeModel(**fields)


def test_issue_example_plan():
    plan = issue_example().plan()
    assert (plan.gpus_per_replica, plan.fit.tensor_parallel, plan.fit.pipeline_parallel) == (
        4,
        4,
        1,
    )
    assert plan.machine_type == "a3-highgpu-8g"  # a3-highgpu-4g: Spot or flex-start only
    assert plan.fit.weights_gb_per_gpu == pytest.approx(35.3)
    assert plan.fit.kv_gb_per_gpu == pytest.approx(34.7)
    assert plan.cost_per_replica_hour() == pytest.approx(4 * H100_ON_DEMAND)
    assert plan.cost_per_replica_hour("spot") == pytest.approx(4 * H100_SPOT)
    assert plan.cost_per_hour(replicas=4) == pytest.approx(16 * H100_ON_DEMAND)
    assert plan.cost_per_hour() == pytest.approx(4 * H100_ON_DEMAND)


def test_plan_table_is_readable():
    text = str(issue_example().plan())
    lines = text.splitlines()
    assert lines[0] == (
        "ServeModel 'chat': meta-llama/Llama-3.1-70B-Instruct (Llama 3.1 70B) on vLLM"
    )
    expected = [
        "GPUs per replica     4 x NVIDIA H100 80GB (TP4 x PP1); 1 pod on a3-highgpu-8g, Deployment",
        "sized up             from the 1 written, which cannot hold the model (4x the price); "
        "max_gpus=1 refuses instead",
        "weights              141.2 GB bfloat16 -> 35.3 GB per GPU",
        "memory per GPU       80.0 GB x 0.90 = 72.0 GB: 35.3 weights + 2.0 activations + 34.7 KV "
        "cache",
        "max concurrency      51.7 requests of 8,192 tokens per replica (target 2)",
        "replicas             1-4, HPA on vllm:num_requests_waiting (target 5 per replica)",
        "cost/hour on-demand  $39.19 per replica, $39.19-$156.74 in all <- this service",
    ]
    for line in expected:
        assert f"  {line}" in lines
    assert "<table>" in issue_example().plan()._repr_html_()


def test_plan_uses_the_price_book_and_spot():
    book = PriceBook.default().with_overrides({"h100": {"on_demand": 10.0, "spot": 3.0}})
    plan = issue_example(spot=True, replicas=2).plan(prices=book)
    assert plan.cost_per_hour() == pytest.approx(2 * 4 * 3.0)
    assert "cost/hour spot       $12.00 per replica, $24.00 in all <- this service" in str(plan)


def test_multi_host_plan():
    plan = issue_example(model="meta-llama/Llama-3.1-405B-Instruct").plan()
    assert (plan.fit.pods, plan.fit.gpus_per_pod, plan.gpus_per_replica) == (2, 8, 16)
    assert plan.machine_type == "a3-highgpu-8g"
    assert "2 pods (one per a3-highgpu-8g node), LeaderWorkerSet" in str(plan)


def test_mig_slice_costs_a_fraction():
    svc = ServeModel(
        name="small",
        model="Qwen/Qwen2.5-7B-Instruct",
        accelerator=Accelerator("h100", mig="3g.40gb"),
    )
    plan = svc.plan()
    assert plan.fit.gpu_memory_gb == 40
    assert plan.cost_per_replica_hour() == pytest.approx(H100_ON_DEMAND / 2)


@pytest.mark.parametrize(
    "svc",
    [
        issue_example(),
        issue_example(engine="tgi", quantization="fp8", replicas=2, spot=True, queue="team-a"),
        issue_example(
            engine="triton", tensor_parallel=4, pipeline_parallel=1,
            model_repository="pvc://engines/llama70b-tp4", routing=Routing(via="inference-gateway"),
        ),
        issue_example(
            model="my-org/coder-13b", hf_token_secret=None, accelerator=Accelerator("l4", count=2),
            model_size=ModelSize(params_b=13, layers=40, attention_heads=40, kv_heads=40,
                                 head_dim=128, max_context=16384),
            routing=Routing(
                via="istio", routes=[Route(model="coder", backends={"chat": 3, "old": 1})]
            ),
            lora_adapters={"sql": "org/sql-lora"}, env={"VLLM_LOGGING_LEVEL": "DEBUG"},
            labels={"team": "ml"},
        ),
    ],
)  # fmt: skip
def test_yaml_round_trip(svc):
    text = svc.to_yaml()
    again = ServeModel.from_yaml(text)
    assert again == svc
    assert again.to_yaml() == text
    assert again.compile().to_yaml() == svc.compile().to_yaml()


def test_defaults():
    svc = ServeModel(name="g", model="google/gemma-2-9b-it", accelerator=Accelerator("l4"),
                     hf_token_secret="hf")  # fmt: skip
    assert svc.context_length == 8192  # the model's context
    assert (
        ServeModel(
            name="q", model="Qwen/Qwen2.5-72B-Instruct", accelerator=Accelerator("h200", count=8)
        ).context_length
        == 8192
    )  # capped
    assert svc.engine == "vllm"
    assert (svc.min_replicas, svc.max_replicas, svc.autoscaling) == (1, 1, None)
    assert svc.model_name == "google/gemma-2-9b-it"
    assert Autoscaling(max=3).target == 5.0
    assert Autoscaling(max=3, batch_size=24).signal == "batch_size"


def test_engine_aliases_and_checkpoint_quantization():
    svc = ServeModel(
        name="r1", model="deepseek-ai/DeepSeek-R1", engine="TensorRT-LLM", tensor_parallel=8,
        pipeline_parallel=1, accelerator=Accelerator("h200", count=8),
        model_repository="gs://engines/r1",
    )  # fmt: skip
    assert svc.engine == "triton"
    assert svc.weight_quantization == "fp8"  # as published
    assert svc.fit.weights_gb == pytest.approx(671)


def test_model_size_by_reference_keeps_the_architecture():
    svc = ServeModel(
        name="ft", model="my-org/llama-70b-support", model_size="llama-3.1-70b",
        accelerator=Accelerator("h100"),
    )  # fmt: skip
    assert svc.fit.tensor_parallel == 4
    assert svc.resolved.gated is False  # the fine-tune's repo, not Meta's


def test_repr_is_short_and_says_when_the_sdk_sized_it_up():
    head, _, sized = repr(issue_example()).partition("  # ")
    assert head == (
        "ServeModel('chat', engine='vllm', model='meta-llama/Llama-3.1-70B-Instruct', "
        "accelerator=Accelerator('h100', count=1))"
    )
    assert sized.startswith("sized up: Llama 3.1 70B needs 141 GB")
    assert "each replica uses 4 x H100 (TP4 x PP1) on one node" in sized
    pinned = issue_example().with_changes(tensor_parallel=4, pipeline_parallel=1)
    assert "sized up" not in repr(pinned)  # a shape the user wrote is not a surprise
