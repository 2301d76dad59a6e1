"""Every compile returns fresh objects: no dict or list is shared between two compiles (or
twice within one), so editing a compiled manifest never changes a later compile."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Accelerator, Autoscaling, ServeModel, TpuSlice, TrainingJob
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.serving.routing import Route, Routing


def _job(**fields: Any) -> TrainingJob:
    return TrainingJob(**{"name": "ft", "image": "img", "command": ["python", "t.py"], **fields})


def _serve(**fields: Any) -> ServeModel:
    base = {"name": "chat", "model": "Qwen/Qwen2.5-7B-Instruct", "accelerator": Accelerator("l4")}
    return ServeModel(**{**base, **fields})


SPECS = {
    "job-single": lambda: _job(accelerator=Accelerator("l4"), labels={"team": "a"}),
    "job-cpu-files": lambda: _job(files={"t.py": "print(1)"}, annotations={"a": "b"}),
    "jobset-gang": lambda: _job(accelerator=Accelerator("h100", count=8), nodes=2, spot=True),
    "jobset-independent": lambda: _job(
        accelerator=Accelerator("l4", sharing="mps", clients_per_gpu=4), nodes=3, gang=False
    ),
    "jobset-multislice": lambda: _job(accelerator=TpuSlice("v5p", "4x4x4", slices=2)),
    "jobset-tpu-slice": lambda: _job(accelerator=TpuSlice("v5e", "4x4"), max_runtime="2h"),
    "serve-deployment": lambda: _serve(replicas=Autoscaling(min=1, max=3), labels={"t": "a"}),
    "serve-gateway": lambda: _serve(
        routing=Routing(via="inference-gateway", routes=[Route(model="m", backends={"chat": 100})])
    ),
    "serve-istio": lambda: _serve(routing=Routing(via="istio")),
    "serve-tgi": lambda: _serve(engine="tgi", hf_token_secret="hf", env={"A": "b"}),
    "serve-triton": lambda: _serve(
        engine="triton", tensor_parallel=1, pipeline_parallel=1, model_repository="gs://bkt/m"
    ),
    "serve-lora": lambda: _serve(lora_adapters={"sql": "org/sql-lora"}, spot=True),
    "serve-lws": lambda: _serve(
        model="meta-llama/Llama-3.1-405B-Instruct",
        accelerator=Accelerator("h100"),
        hf_token_secret="hf",
        replicas=Autoscaling(min=1, max=2, batch_size=8),
    ),
}


def containers(manifests: Manifests) -> dict[int, str]:
    """id() -> path of every dict and list in the compiled objects and workload."""
    found: dict[int, str] = {}
    duplicates: list[str] = []

    def walk(node: Any, path: str) -> None:
        if not isinstance(node, (dict, list)):
            return
        if id(node) in found:
            duplicates.append(f"{path} is {found[id(node)]}")
            return
        found[id(node)] = path
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            walk(value, f"{path}/{key}")

    walk([*manifests.objects, manifests.workload], "")
    assert not duplicates, f"one container appears twice in one output: {duplicates[:3]}"
    return found


@pytest.mark.parametrize("name", SPECS)
def test_two_compiles_share_no_container(name):
    spec = SPECS[name]()
    first, second = spec.compile(), spec.compile()  # both alive: ids cannot be reused
    a, b = containers(first), containers(second)
    # The root ("") is the list `containers` builds for the walk: a freed temporary whose id
    # the second walk may reuse, not part of any output.
    shared = sorted(a[i] for i in set(a) & set(b) if a[i])
    assert not shared, f"{len(shared)} containers shared between compiles, e.g. {shared[:3]}"


@pytest.mark.parametrize("name", SPECS)
def test_editing_a_compiled_object_leaves_later_compiles_unchanged(name):
    spec = SPECS[name]()
    expected = spec.compile().to_yaml()
    first = spec.compile()
    for obj in [*first.objects, first.workload]:
        _scribble(obj)
    assert spec.compile().to_yaml() == expected


def _scribble(node: Any) -> None:
    """Change every dict and list in place, as a user editing manifests might."""
    if isinstance(node, dict):
        for value in list(node.values()):
            _scribble(value)
        node["x-edited"] = True
    elif isinstance(node, list):
        for value in node:
            _scribble(value)
        node.append("edited")
