"""The frozen pydantic base every spec model shares: SpecError instead of pydantic's
ValidationError, and lossless YAML round trips."""

from __future__ import annotations

import re
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from gkeml_sdk.errors import SpecError

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


class SpecModel(BaseModel):
    """Frozen, strict about unknown fields, and raising `SpecError` for every mistake."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, defer_build=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _as_spec_error(type(self), exc) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Self:
        """Validate a dict (as from YAML), raising `SpecError` on invalid input."""
        try:
            return super().model_validate(obj, **kwargs)
        except ValidationError as exc:
            raise _as_spec_error(cls, exc) from None

    def to_yaml(self) -> str:
        """The spec as YAML; `from_yaml` reads it back to an equal object."""
        import yaml

        return yaml.safe_dump(self.model_dump(mode="json", exclude_defaults=True), sort_keys=False)

    @classmethod
    def from_yaml(cls, text: str) -> Self:
        """Read a spec written by `to_yaml` (or by hand)."""
        import yaml

        data = yaml.safe_load(text)
        if not isinstance(data, dict):
            raise SpecError(
                f"{cls.__name__} YAML must be a mapping of fields, got {type(data).__name__}",
                fix=f"write fields as `name: value` lines, e.g. {cls.__name__}().to_yaml()",
            )
        data.pop("kind", None)
        return cls.model_validate(data)


def _as_spec_error(cls: type[BaseModel], exc: ValidationError) -> SpecError:
    model = cls.__name__
    for error in exc.errors():
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, SpecError):
            return cause
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or model
    if first["type"] == "extra_forbidden":
        return SpecError(
            f"{model}: unknown field {where!r}",
            rule=f"{model} accepts only its declared fields",
            fix=f"check the spelling; {model} fields are {', '.join(cls.model_fields)}",
            field=where,
        )
    if first["type"] == "missing":
        return SpecError(
            f"{model}: field {where!r} is required", fix=f"pass {where}=...", field=where
        )
    return SpecError(
        f"{model}.{where}: {first['msg']} (got {first.get('input')!r})",
        fix="see the field's documented type",
        field=where,
    )


def fail(what: str, *, rule: str = "", fix: str = "", field: str = "") -> SpecError:
    """Shorthand used by validators: `raise fail(...)`."""
    return SpecError(what, rule=rule, fix=fix, field=field)
