"""A value of the wrong type is answered with the type and an example made from the value:
`command="python train.py"` -> `a list: command=['python', 'train.py']`."""

from __future__ import annotations

import pytest

from gkeml_sdk import Accelerator, ServeModel, SpecError, TrainingJob


@pytest.mark.parametrize(
    ("fields", "fix"),
    [
        ({"command": "python train.py"}, "Try: a list: command=['python', 'train.py'] (The"),
        ({"args": "--lr 0.1"}, "Try: a list: args=['--lr', '0.1'] ("),
        ({"env": ["LR=0.1", "EPOCHS=3"]}, "Try: a dict: env={'LR': '0.1', 'EPOCHS': '3'} ("),
        ({"labels": "team=nlp, tier=b"}, "Try: a dict: labels={'team': 'nlp', 'tier': 'b'} ("),
        ({"annotations": 7}, "Try: a dict: annotations={'KEY': 'value'} ("),
        ({"nodes": "two"}, "Try: a whole number: nodes=2 ("),
        ({"max_restarts": 2.5}, "Try: a whole number: max_restarts=2 ("),
        ({"spot": "maybe"}, "Try: True or False: spot=True ("),
        ({"image": 3}, "Try: a string: image='3' ("),
    ],
)
def test_a_wrong_type_says_the_type_with_an_example(fields: dict[str, object], fix: str) -> None:
    with pytest.raises(SpecError) as caught:
        TrainingJob(name="ft", **{"command": ["x"], **fields})
    assert fix in str(caught.value)
    assert caught.value.field == next(iter(fields))


def test_a_nested_models_field_is_named_as_that_model_spells_it() -> None:
    with pytest.raises(SpecError) as caught:
        TrainingJob(name="ft", command=["x"], accelerator={"model": "l4", "count": "x"})
    assert "Accelerator.count" in str(caught.value) and "Try: a whole number: count=2" in str(
        caught.value
    )


def test_other_models_get_examples_too() -> None:
    with pytest.raises(SpecError, match=r"Try: a whole number: max_model_len=2"):
        ServeModel(
            name="qa",
            model="Qwen/Qwen2.5-7B-Instruct",
            accelerator=Accelerator("l4"),
            max_model_len="long",
        )
