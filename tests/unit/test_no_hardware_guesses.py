"""gkeml guesses no hardware: a name of two GPUs is refused with both, a count that is no count
is refused, and a serving replica sized past what the spec wrote says so beside the GPUs and
the price."""

from __future__ import annotations

import pytest

from gkeml_magics.options import MagicDefaults, train_job
from gkeml_magics.parsers import parse, train_parser
from gkeml_sdk import Accelerator, ServeModel, SpecError, TrainingJob
from gkeml_sdk.core.lookup import AmbiguousName
from gkeml_sdk.hardware import gpus


@pytest.mark.parametrize("name", ["a100", "A100", " A100 "])
def test_a_name_of_two_gpus_is_refused_with_both(name: str) -> None:
    with pytest.raises(AmbiguousName) as caught:
        gpus.gpu(name)
    assert caught.value.valid == ["a100-40gb", "a100-80gb"]
    with pytest.raises(SpecError) as error:
        Accelerator(name)
    text = str(error.value)
    assert f"GPU {name!r} is ambiguous: 'a100-40gb' (NVIDIA A100 40GB) or 'a100-80gb'" in text
    assert "Try: Accelerator('a100-40gb', ...) or Accelerator('a100-80gb', ...)" in text
    assert error.value.field == "model"


def test_the_magic_refuses_an_ambiguous_gpu_too() -> None:
    with pytest.raises(SpecError, match="'a100' is ambiguous"):
        train_job(parse(train_parser(), "--gpu a100:8"), MagicDefaults(), "print(1)")


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"nodes": 0}, "nodes=0 (rule: a job runs on at least one node). Try: nodes=1"),
        ({"nodes": True}, "nodes=True is not a count"),
        ({"nodes": False}, "nodes=False is not a count"),
        ({"procs_per_node": True}, "procs_per_node=True is not a count"),
    ],
)
def test_a_count_that_is_no_count_is_refused(fields: dict[str, object], expected: str) -> None:
    with pytest.raises(SpecError) as caught:
        TrainingJob(name="ft", command=["x"], **fields)
    assert expected in str(caught.value)


def test_nodes_left_out_is_derived() -> None:
    assert TrainingJob(name="ft", command=["x"]).nodes == 1
    assert TrainingJob(name="ft", command=["x"], nodes=None).nodes == 1


def llama_70b(**fields: object) -> ServeModel:
    return ServeModel(
        name="chat",
        model="meta-llama/Llama-3.1-70B-Instruct",
        hf_token_secret="hf",
        **{"accelerator": Accelerator("l4"), **fields},
    )


def test_sizing_up_shows_beside_the_gpus_the_price_and_the_picture() -> None:
    plan = llama_70b().plan()
    assert plan.sized_up_from == 1 and plan.gpus_per_replica == 8
    labels = [label for label, _ in plan.rows()]
    assert labels[:2] == ["GPUs per replica", "sized up"]  # beside the GPUs, above the price
    assert dict(plan.rows())["sized up"] == (
        "from the 1 written, which cannot hold the model (8x the price); max_gpus=1 refuses instead"
    )
    assert "(sized up from 1)" in plan._repr_html_()
    assert "sized up: Llama 3.1 70B needs 141 GB" in repr(llama_70b())


def test_a_plan_as_written_says_nothing_of_sizing() -> None:
    plan = llama_70b(accelerator=Accelerator("h100", count=8)).plan()
    assert plan.sized_up_from is None
    assert "sized up" not in str(plan) + plan._repr_html_()


def test_max_gpus_refuses_instead_of_sizing_up() -> None:
    with pytest.raises(SpecError) as caught:
        llama_70b(max_gpus=1)
    assert "needs 8 x L4 per replica" in str(caught.value) and caught.value.field == "max_gpus"
