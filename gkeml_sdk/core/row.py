"""`Row`: the value class of catalog rows and small results. It behaves as a frozen dataclass
(fields from the annotations, `field(...)` options, keyword-only fields, `__post_init__`,
repr, equality, hashing, `FrozenInstanceError`) but builds no code per class: `dataclasses`
compiles six methods for each class it decorates, and for the classes that rendering one spec
imports, that was a tenth of the instructions the whole render ran."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import _FIELD, MISSING, Field, FrozenInstanceError, field  # type: ignore[attr-defined]
from typing import Any, ClassVar, dataclass_transform

_MUTABLE = (list, dict, set)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Row:
    """Subclass it and annotate the fields, as with `@dataclass(frozen=True)`;
    `class X(Row, frozen=False)` makes instances assignable (and unhashable).

    Example:
        >>> from dataclasses import field
        >>> class Shape(Row):
        ...     name: str
        ...     gpus: int = 1
        ...     tags: tuple[str, ...] = field(default=(), kw_only=True)
        >>> Shape("a3", 8), Shape("a3", 8) == Shape("a3", gpus=8), Shape("g2").gpus
        (Shape(name='a3', gpus=8, tags=()), True, 1)
        >>> Shape("a3").gpus = 2
        Traceback (most recent call last):
        ...
        dataclasses.FrozenInstanceError: cannot assign to field 'gpus'
    """

    __slots__ = ()
    # Filled per subclass: every field, the positional ones, defaults, default factories, the
    # fields that equality and repr use, and whether `__post_init__` runs.
    _row_names: ClassVar[tuple[str, ...]] = ()
    _row_positional: ClassVar[tuple[str, ...]] = ()
    _row_template: ClassVar[dict[str, Any]] = {}
    _row_undefaulted: ClassVar[tuple[str, ...]] = ()
    _row_factories: ClassVar[dict[str, Callable[[], Any]]] = {}
    _row_compared: ClassVar[tuple[str, ...]] = ()
    _row_shown: ClassVar[tuple[str, ...]] = ()
    _row_post_init: ClassVar[bool] = False

    def __init_subclass__(cls, *, frozen: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # `dataclasses.Field`s, so that `dataclasses.fields`, `replace` and `asdict` work too.
        fields: dict[str, Field[Any]] = {}
        for base in reversed(cls.__mro__[1:]):
            if "_row_names" in base.__dict__ and base is not Row:
                fields.update(base.__dataclass_fields__)  # type: ignore[attr-defined]
        for name, annotation in inspect.get_annotations(cls).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            fields.pop(name, None)
            fields[name] = _field(cls, name, annotation)
        positional = tuple(n for n, f in fields.items() if not f.kw_only)
        defaults = {n: f.default for n, f in fields.items() if f.default is not MISSING}
        factories: dict[str, Callable[[], Any]] = {}
        for name, described in fields.items():
            if described.default_factory is not MISSING:
                factories[name] = described.default_factory
        optional = [n for n in positional if n in defaults or n in factories]
        for name in positional[positional.index(optional[0]) :] if optional else ():
            if name not in defaults and name not in factories:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
        cls._row_template = {n: defaults.get(n, MISSING) for n in fields}
        cls._row_undefaulted = tuple(n for n in fields if n not in defaults)
        cls._row_names = tuple(fields)
        cls._row_positional = positional
        cls._row_factories = factories
        cls._row_compared = tuple(n for n, f in fields.items() if f.compare)
        cls._row_shown = tuple(n for n, f in fields.items() if f.repr)
        cls._row_post_init = hasattr(cls, "__post_init__")
        cls.__match_args__ = positional  # type: ignore[attr-defined,misc]
        if not frozen:
            cls.__setattr__ = object.__setattr__  # type: ignore[method-assign,assignment]
            cls.__delattr__ = object.__delattr__  # type: ignore[method-assign]
            cls.__hash__ = None  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cls = type(self)
        given = dict(zip(cls._row_positional, args, strict=False))
        if len(given) < len(args) or not given.keys().isdisjoint(kwargs):
            raise _call_error(cls, args, kwargs)
        # Every field in order, MISSING where the call gave none and no default applies.
        values = {**cls._row_template, **given, **kwargs}
        if len(values) != len(cls._row_template):
            raise _call_error(cls, args, kwargs)
        for name in cls._row_undefaulted:
            if values[name] is MISSING:
                if name not in cls._row_factories:
                    raise _call_error(cls, args, kwargs)
                values[name] = cls._row_factories[name]()
        # All fields in one update of the instance's dict, past the frozen __setattr__.
        self.__dict__.update(values)
        if cls._row_post_init:
            self.__post_init__()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._row_shown)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._row_key() == other._row_key()

    def __hash__(self) -> int:
        return hash(self._row_key())

    def _row_key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._row_compared)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def _field(cls: type, name: str, annotation: Any) -> Field[Any]:
    # The field as `dataclasses` describes it, with the class attribute set as it would set it.
    value = cls.__dict__.get(name, MISSING)
    if isinstance(value, Field):
        if value.init is False or value.hash is not None or value.metadata:
            raise TypeError(f"{cls.__name__}.{name}: Row fields take default, "
                            "default_factory, kw_only, repr and compare only")  # fmt: skip
        described = value
        if value.default is MISSING:
            delattr(cls, name)
        else:
            setattr(cls, name, value.default)
    else:
        if isinstance(value, _MUTABLE):
            raise ValueError(f"mutable default {type(value)} for field {name} is not "
                             "allowed: use default_factory")  # fmt: skip
        described = field(default=value)
    described.name, described.type = name, annotation
    described.kw_only = described.kw_only is True
    described._field_type = _FIELD  # type: ignore[attr-defined]
    return described


def _call_error(cls: type[Row], args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    # The TypeError a generated __init__ would raise for this call.
    name = cls.__name__
    positional = cls._row_positional
    if len(args) > len(positional):
        count = f"{len(positional)} positional arguments but {len(args)} were given"
        return TypeError(f"{name}() takes {count}")
    given = set(positional[: len(args)])
    for key in kwargs:
        if key in given:
            return TypeError(f"{name}() got multiple values for argument {key!r}")
        if key not in cls._row_template:
            return TypeError(f"{name}() got an unexpected keyword argument {key!r}")
    missing = [n for n in cls._row_undefaulted if n not in given and n not in kwargs]
    missing = [n for n in missing if n not in cls._row_factories]
    return TypeError(f"{name}() missing required argument: {missing[0]!r}")
