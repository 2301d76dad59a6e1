"""Kubernetes resource quantities as users write them for `cpu` and `memory`, checked the way
the API server parses them (apimachinery `resource.Quantity`), and positive."""

from __future__ import annotations

import re
from decimal import Decimal

from gkeml_sdk.core.model import fail

# <number><suffix>: binary SI, decimal SI or a small decimal exponent; no sign (positive only).
_QUANTITY = re.compile(
    r"^(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?[0-9]{1,2})?\Z"
)
_EXAMPLES = {"cpu": "cpu='500m' or cpu='4'", "memory": "memory='16Gi' or memory='512Mi'"}


def check_quantity(field: str, value: str | None) -> None:
    """Raise `SpecError` unless `value` is a positive Kubernetes quantity.

    Example:
        >>> check_quantity("memory", "16Gi")
        >>> check_quantity("cpu", "-1")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: cpu='-1' is not a positive Kubernetes quantity ...
    """
    if value is None:
        return
    match = _QUANTITY.match(value)
    if match is None or Decimal(match["number"]) == 0:
        raise fail(
            f"{field}={value!r} is not a positive Kubernetes quantity",
            rule="a quantity is a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, ...) "
            "and a request must be above zero",
            fix=_EXAMPLES.get(field, f"{field}='1'"),
            field=field,
        )
