"""`PlainValue`: equality, hashing and repr from a class's `__slots__`, for the small value
classes a local run's supervisor uses. `dataclasses` (with the `inspect` it imports) would cost
that short-lived process more than all the rest of its start."""

from __future__ import annotations


class PlainValue:
    """Subclass it, name the fields in `__match_args__` (in order) and `__slots__`, and assign
    them in `__init__`; instances compare, hash, print and match by those fields, as a
    dataclass's do. A mutable subclass sets `__hash__ = None`; a frozen one subclasses
    `FrozenValue` instead.

    Example:
        >>> class Point(PlainValue):
        ...     __match_args__ = ("x", "y")
        ...     __slots__ = __match_args__
        ...     def __init__(self, x: int, y: int = 0) -> None:
        ...         self.x, self.y = x, y
        >>> Point(1), Point(1) == Point(1, 0), Point(1) == Point(2), len({Point(1), Point(1)})
        (Point(x=1, y=0), True, False, 1)
    """

    __match_args__: tuple[str, ...] = ()
    __slots__ = ()

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, PlainValue)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__qualname__}({shown})"


class FrozenValue(PlainValue):
    """A `PlainValue` whose fields cannot change once `__init__` has set them, like a frozen
    dataclass's (assigning raises AttributeError, as `dataclasses.FrozenInstanceError` is).

    Example:
        >>> class Point(FrozenValue):
        ...     __match_args__ = ("x",)
        ...     __slots__ = __match_args__
        ...     def __init__(self, x: int) -> None:
        ...         self.x = x
        >>> point = Point(1)
        >>> point.x = 2
        Traceback (most recent call last):
        AttributeError: cannot assign to field 'x': Point is frozen
    """

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):  # an unset slot has no value yet: __init__ is setting it
            raise AttributeError(
                f"cannot assign to field {name!r}: {type(self).__qualname__} is frozen"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__qualname__} is frozen")
