"""SpecModel: SpecError for every mistake, validators that run once per validation, and each
field's description in `help()` and in the messages that quote the field."""

from __future__ import annotations

import inspect
import pydoc
from collections import Counter
from collections.abc import Callable

import pytest
from pydantic import Field, ValidationError, field_validator, model_validator

from gkeml_sdk.core.model import SpecModel
from gkeml_sdk.errors import SpecError

CALLS: Counter[str] = Counter()


class Probe(SpecModel):
    """A model that counts its validators' calls.

    Example:
        >>> Probe(size=2).size
        2
    """

    size: int = Field(description="How big it is, in units.")
    label: str = Field("x", description="What it is called.")

    @field_validator("size")
    @classmethod
    def _size(cls, value: int) -> int:
        CALLS["field"] += 1
        return value

    @model_validator(mode="before")
    @classmethod
    def _before(cls, data: object) -> object:
        CALLS["before"] += 1
        return data

    @model_validator(mode="after")
    def _after(self) -> Probe:
        CALLS["after"] += 1
        return self


@pytest.mark.parametrize(
    "make",
    [
        lambda: Probe(size=1),
        lambda: Probe.model_validate({"size": 1}),
        lambda: Probe.from_yaml("size: 1\n"),
    ],
    ids=["constructor", "model_validate", "from_yaml"],
)
def test_each_validator_runs_once(make: Callable[[], Probe]) -> None:
    CALLS.clear()
    assert make().size == 1
    assert dict(CALLS) == {"field": 1, "before": 1, "after": 1}


@pytest.mark.parametrize(
    "make",
    [
        lambda: Probe(size="big"),
        lambda: Probe.model_validate({"size": "big"}),
        lambda: Probe.from_yaml("size: big\n"),
        lambda: Probe.model_validate(["size"]),
    ],
    ids=["constructor", "model_validate", "from_yaml", "not_a_mapping"],
)
def test_mistakes_are_spec_errors(make: Callable[[], Probe]) -> None:
    with pytest.raises(SpecError) as caught:
        make()
    assert not isinstance(caught.value, ValidationError)


def test_messages_say_what_the_field_means() -> None:
    with pytest.raises(SpecError, match=r"field 'size' is required \(How big it is, in units\)"):
        Probe()
    with pytest.raises(SpecError, match=r"Try: a string: label='3' \(What it is"):
        Probe(size=1, label=3)


def test_help_and_the_signature_show_the_fields() -> None:
    text = pydoc.render_doc(Probe, renderer=pydoc.plaintext)
    assert "Attributes:\n |      size: How big it is, in units.\n |      label: What it" in text
    assert text.index("Attributes:") < text.index("Example:")
    assert str(inspect.signature(Probe)) == "(*, size: int, label: str = 'x') -> None"
