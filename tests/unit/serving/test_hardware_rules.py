"""Sizing the user did not write: one sentence in repr, notes and the CLI when the SDK scales a
spec past its accelerator, and `max_gpus` refusing plans beyond it."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, ServeModel
from gkeml_sdk.errors import SpecError
from gkeml_sdk.serving.hardware_rules import scale_up_sentence

L8, L70, L405 = (
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
    "meta-llama/Llama-3.1-405B-Instruct",
)


def make(model: str, acc: Accelerator, **kw) -> ServeModel:
    return ServeModel(name="chat", model=model, accelerator=acc, hf_token_secret="hf", **kw)


@pytest.mark.parametrize(
    ("model", "acc", "kw", "expected"),
    [
        (L8, Accelerator("l4"), {}, None),
        (L70, Accelerator("l4"), {}, "each replica uses 8 x L4 (TP8 x PP1) on one node"),
        (L405, Accelerator("l4"), {}, "each replica uses 48 x L4 (TP8 x PP6) over 6 nodes"),
        (L70, Accelerator("h100", count=8), {}, None),  # 4 of the 8 written: not past it
        (L70, Accelerator("l4"), {"tensor_parallel": 8, "pipeline_parallel": 1}, None),
    ],
)
def test_the_sentence(model, acc, kw, expected):
    svc = make(model, acc, **kw)
    sentence = scale_up_sentence(svc)
    if expected is None:
        assert sentence is None
        assert "sized up" not in repr(svc)
        return
    assert expected in sentence and sentence.count(". ") == 0  # one sentence
    assert sentence in repr(svc)
    assert sentence in svc.compile().notes


def test_405b_on_l4_states_the_weights_and_the_gpu():
    sentence = scale_up_sentence(make(L405, Accelerator("l4")))
    assert sentence.startswith("sized up: Llama 3.1 405B needs 812 GB of weights in bfloat16")
    assert "more than 1 x L4 (24 GB) holds" in sentence


@pytest.mark.parametrize(
    ("model", "max_gpus", "refused"),
    [(L70, 8, False), (L70, 4, True), (L405, 16, True), (L8, 1, False)],
)
def test_max_gpus(model, max_gpus, refused):
    if not refused:
        assert make(model, Accelerator("l4"), max_gpus=max_gpus).fit.gpus <= max_gpus
        return
    with pytest.raises(SpecError) as err:
        make(model, Accelerator("l4"), max_gpus=max_gpus)
    assert err.value.field == "max_gpus"
    assert f"above max_gpus={max_gpus}" in str(err.value)
    assert "quantization='fp8'" in err.value.fix and "max_gpus=" in err.value.fix
