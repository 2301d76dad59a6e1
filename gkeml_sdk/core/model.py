"""The frozen pydantic base every spec model shares: SpecError instead of pydantic's
ValidationError, each field's description in `help()`, and lossless YAML round trips."""

from __future__ import annotations

import inspect
import re
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo

# The name patterns every spec checks, re-exported from where the API server's rules live.
from gkeml_sdk.core.apimachinery import DNS1035_LABEL as DNS1035_LABEL
from gkeml_sdk.core.apimachinery import DNS1123_LABEL as DNS1123_LABEL
from gkeml_sdk.core.apimachinery import DNS1123_SUBDOMAIN as DNS1123_SUBDOMAIN
from gkeml_sdk.core.apimachinery import LABEL_VALUE as LABEL_VALUE
from gkeml_sdk.core.spec_text import load_yaml
from gkeml_sdk.core.type_examples import expected_example
from gkeml_sdk.errors import SpecError, excerpt


class SpecModel(BaseModel):
    """Frozen, strict about unknown fields, and raising `SpecError` for every mistake."""

    # inf and nan are never a size, a count or a target: refused for every float field.
    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        # A field's meaning is written once, as its description; help() reads it from here.
        cls.__doc__ = _with_attributes(cls.__doc__ or "", cls.model_fields)

    def __init__(self, /, **data: Any) -> None:
        """Validate the fields, raising `SpecError` on invalid input."""
        # pydantic also calls this for a nested model given as a mapping, so a mistake inside
        # it reaches the outer model as the nested model's own SpecError, which it re-raises.
        _check_numbers(type(self), data)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _as_spec_error(type(self), exc) from None
        except TypeError as exc:
            raise _wrong_type(type(self), exc) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate a dict (as from YAML), raising `SpecError` on invalid input."""
        if isinstance(obj, dict) and not all(isinstance(key, str) for key in obj):
            # pydantic raises a bare TypeError for these (YAML `?` or `1: x` at the top level).
            odd = next(key for key in obj if not isinstance(key, str))
            raise SpecError(
                f"{cls.__name__}: field name {excerpt(odd)} is not a name",
                rule=f"{cls.__name__} fields are named by strings",
                fix=f"check the spelling; {cls.__name__} fields are {', '.join(cls.model_fields)}",
            )
        if isinstance(obj, dict) and not kwargs:
            # Through __init__ alone: pydantic's own model_validate would call this class's
            # __init__ from inside its validation and so run every model validator twice.
            return cls(**obj)
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:
            raise _as_spec_error(cls, exc) from None
        except TypeError as exc:
            raise _wrong_type(cls, exc) from None

    def to_yaml(self) -> str:
        """The spec as YAML; `from_yaml` reads it back to an equal object."""
        from gkeml_sdk.core.yaml_out import dump_all

        return dump_all([self.model_dump(mode="json", exclude_defaults=True)], literal=False)

    @classmethod
    def from_yaml(cls, text: str) -> Self:
        """Read a spec written by `to_yaml` (or by hand)."""
        data = load_yaml(text, cls.__name__)
        if not isinstance(data, dict):
            raise SpecError(
                f"{cls.__name__} YAML must be a mapping of fields, got {type(data).__name__}",
                fix=f"write fields as `name: value` lines, e.g. {cls.__name__}().to_yaml()",
            )
        data.pop("kind", None)
        return cls.model_validate(data)


# Kubernetes stores whole numbers as 64-bit integers; beyond those, Python cannot even print
# some (more than 4,300 digits), so repr() and to_yaml() of the model would fail.
INT_MAX = 2**63 - 1


def _check_numbers(cls: type[BaseModel], data: dict[str, Any]) -> None:
    """Refuse a whole number beyond `INT_MAX` anywhere in `data` (lists and mappings too)."""
    stack: list[tuple[str, Any]] = list(data.items())
    while stack:
        where, value = stack.pop()
        if isinstance(value, int) and not isinstance(value, bool):
            if -INT_MAX - 1 <= value <= INT_MAX:
                continue
            raise SpecError(
                f"{cls.__name__}.{excerpt(where, 80)}: a whole number of "
                f"{value.bit_length()} bits, beyond any number Kubernetes stores",
                rule=f"whole numbers are 64-bit: from {-INT_MAX - 1} to {INT_MAX}",
                fix="use the number you mean, within that range",
                field=where.split(".", 1)[0].split("[", 1)[0],
            )
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}", v) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))


def _with_attributes(doc: str, fields: dict[str, FieldInfo]) -> str:
    """`doc` with an `Attributes:` section listing each described field, before its example."""
    lines = [f"    {name}: {info.description}" for name, info in fields.items() if info.description]
    if not lines:
        return doc
    head, *example = re.split(r"^(?=Examples?:$)", inspect.cleandoc(doc), maxsplit=1, flags=re.M)
    parts = [head.rstrip(), "Attributes:\n" + "\n".join(lines), *example]
    return "\n\n".join(part for part in parts if part)


def _as_spec_error(cls: type[BaseModel], exc: ValidationError) -> SpecError:
    model = cls.__name__
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, SpecError):
            return cause
    errors = exc.errors()
    # A misspelt field is also a missing one: the spelling is the mistake to name.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    where = ".".join(str(p) for p in first["loc"]) or model
    if first["type"] == "extra_forbidden":
        from difflib import get_close_matches  # only a misspelt field needs it

        fields = list(cls.model_fields)
        close = get_close_matches(where, fields, n=1) if len(first["loc"]) == 1 else []
        guess = f"; did you mean {close[0]!r}?" if close else ""
        return SpecError(
            f"{model}: unknown field {where!r}{guess}",
            rule=f"{model} accepts only its declared fields",
            fix=f"check the spelling; {model} fields are {', '.join(fields)}",
            field=where,
        )
    meaning = _meaning(cls, first["loc"])
    if first["type"] == "missing":
        return SpecError(
            f"{model}: field {where!r} is required{meaning}", fix=f"pass {where}=...", field=where
        )
    # A top-level field gets an example of its type made from what was given.
    example = len(first["loc"]) == 1 and expected_example(first["type"], where, first.get("input"))
    fix = example or "see the field's documented type"
    return SpecError(
        f"{model}.{where}: {first['msg']} (got {excerpt(first.get('input'))})",
        fix=f"{fix}{meaning}",
        field=where,
    )


def _meaning(cls: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """The meaning of the field at `loc`, in parentheses; none for a nested model's field."""
    info = cls.model_fields.get(str(loc[0])) if len(loc) == 1 else None
    return f" ({info.description.rstrip('.')})" if info and info.description else ""


def _wrong_type(cls: type[BaseModel], exc: TypeError) -> SpecError:
    # pydantic passes a validator's TypeError through unwrapped (a list where a name belongs,
    # a mapping key that is a list); it is still the caller's input that is wrong.
    return SpecError(
        f"{cls.__name__}: a field has a value of the wrong type ({excerpt(str(exc))})",
        fix=f"see the documented types of {cls.__name__}'s fields",
    )


def fail(what: str, *, rule: str = "", fix: str = "", field: str = "") -> SpecError:
    """Shorthand used by validators: `raise fail(...)`."""
    return SpecError(what, rule=rule, fix=fix, field=field)
