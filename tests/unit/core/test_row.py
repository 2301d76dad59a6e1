"""`Row` behaves as the frozen dataclass it replaces: fields, defaults, keyword-only fields,
repr, equality, hashing, immutability and the `dataclasses` helpers."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import field

import pytest

from gkeml_sdk.core.row import Row


class Shape(Row):
    name: str
    gpus: int = 1
    tags: tuple[str, ...] = field(default=(), kw_only=True)
    hidden: object = field(default=None, repr=False, compare=False)


class Wide(Shape):
    memory_gb: int = 0


class Checked(Row):
    count: int

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("count")


class Bag(Row, frozen=False):
    items: list[int] = field(default_factory=list)


def test_construction_repr_and_equality_match_a_frozen_dataclass():
    shape = Shape("a3", 8, tags=("x",), hidden=object())
    assert repr(shape) == "Shape(name='a3', gpus=8, tags=('x',))"
    assert shape == Shape("a3", gpus=8, tags=("x",))  # hidden is not compared
    assert shape != Shape("a3") and Shape("a3").gpus == 1
    assert hash(shape) == hash(Shape("a3", 8, tags=("x",)))
    assert Shape.__match_args__ == ("name", "gpus", "hidden")
    assert Shape("a") != Wide("a")  # another class is never equal


def test_rows_are_frozen():
    shape = Shape("a3")
    with pytest.raises(dataclasses.FrozenInstanceError):
        shape.gpus = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del shape.name  # type: ignore[misc]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: Shape(), "missing required argument: 'name'"),
        (lambda: Shape("a", 1, None, 4), "takes 3 positional arguments but 4 were given"),
        (lambda: Shape("a", name="b"), "got multiple values for argument 'name'"),
        (lambda: Shape("a", colour="red"), "got an unexpected keyword argument 'colour'"),
    ],
)
def test_wrong_calls_raise_type_errors(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_subclasses_add_fields_and_post_init_runs():
    assert repr(Wide("a", 2, memory_gb=80)) == "Wide(name='a', gpus=2, tags=(), memory_gb=80)"
    with pytest.raises(ValueError, match="count"):
        Checked(-1)


def test_mutable_rows_and_default_factories():
    bag = Bag()
    bag.items.append(1)
    bag.items = [*bag.items, 2]
    assert bag == Bag([1, 2]) and Bag().items == []
    with pytest.raises(TypeError):
        hash(bag)


def test_dataclasses_helpers_and_pickle_work():
    shape = Shape("a3", 8)
    assert dataclasses.is_dataclass(shape)
    assert [f.name for f in dataclasses.fields(shape)] == ["name", "gpus", "tags", "hidden"]
    assert dataclasses.replace(shape, gpus=4) == Shape("a3", 4)
    assert dataclasses.asdict(Shape("a"))["gpus"] == 1
    assert pickle.loads(pickle.dumps(shape)) == shape


def test_definitions_dataclasses_refuses_are_refused():
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        class _Order(Row):
            a: int = 0
            b: int

    with pytest.raises(ValueError, match="mutable default"):

        class _Mutable(Row):
            a: list[int] = []  # noqa: RUF012
