"""Golden manifests of representative services: a diff of these files reviews a serving
compile change. Regenerate with GKEML_UPDATE_GOLDEN=1 after checking the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.rollout import Autoscaling
from gkeml_sdk.serving.routing import Route, Routing

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "serving"

SERVICES = {
    # The example.
    "vllm-llama70b-h100": ServeModel(
        name="chat", engine="vllm", model="meta-llama/Llama-3.1-70B-Instruct",
        accelerator=Accelerator("h100"), tensor_parallel="auto", max_model_len=8192,
        replicas=Autoscaling(min=1, max=4, queue_depth=5), hf_token_secret="hf-token",
    ),
    "tgi-mistral7b-l4": ServeModel(
        name="mistral", engine="tgi", model="mistralai/Mistral-7B-Instruct-v0.3",
        accelerator=Accelerator("l4"), max_model_len=4096, replicas=2, spot=True,
        queue="team-a", hf_token_secret="hf-token", namespace="serving",
    ),
    "triton-llama8b-l4": ServeModel(
        name="llama8b", engine="triton", model="meta-llama/Llama-3.1-8B-Instruct",
        accelerator=Accelerator("l4", count=2), tensor_parallel=2, pipeline_parallel=1,
        model_repository="gs://trtllm-engines/llama-3.1-8b/tp2", namespace="serving",
        replicas=Autoscaling(min=2, max=8, queue_depth=10),
        routing=Routing(via="istio", routes=[
            Route(model="llama-3.1-8b", backends={"llama8b": 90, "llama8b-next": 10}),
        ]),
    ),
    "vllm-multihost-llama405b-h100": ServeModel(
        name="llama405b", engine="vllm", model="meta-llama/Llama-3.1-405B-Instruct",
        accelerator=Accelerator("h100", count=8), served_model_name="llama-3.1-405b",
        replicas=Autoscaling(min=1, max=2, queue_depth=5), hf_token_secret="hf-token",
        namespace="serving", routing=Routing(via="inference-gateway", gateway="inference-gw"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_golden(name):
    path = GOLDEN / f"{name}.yaml"
    text = SERVICES[name].compile().to_yaml()
    if os.environ.get("GKEML_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with GKEML_UPDATE_GOLDEN=1"
    assert text == path.read_text()
