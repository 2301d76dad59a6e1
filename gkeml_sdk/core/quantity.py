"""Kubernetes resource quantities: the one grammar (apimachinery `resource.Quantity`,
pkg/api/resource/quantity.go), the one parser to `Decimal`, and the check of the `cpu` and
`memory` a user asks for; durations written as seconds or d/h/m/s."""

from __future__ import annotations

import re
from decimal import Decimal, DecimalException
from typing import Any

from gkeml_sdk.core.model import fail

# <signedNumber><suffix>, the serialization grammar quantity.go documents: the suffix is binary
# SI, decimal SI (n u m "" k M G T P E) or a signed decimal exponent.
_QUANTITY = (
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE](?P<exponent>[+-]?[0-9]+))?"
)
_MULTIPLIER: dict[str, Decimal | int] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1, "k": 10**3,
    "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}  # fmt: skip
# quantity.go caps a binary SI quantity at 2**63 - 1 and Kubernetes accounts requests in int64:
# a request above that is not one anybody means.
_LARGEST = 2**63 - 1
_EXAMPLES = {"cpu": "cpu='500m' or cpu='4'", "memory": "memory='16Gi' or memory='512Mi'"}


def parse_quantity(text: str) -> Decimal:
    """The value of a Kubernetes quantity; `ValueError` for a string Kubernetes refuses.

    Example:
        >>> parse_quantity("500m"), parse_quantity("1Gi"), parse_quantity("-1.5e3")
        (Decimal('0.500'), Decimal('1073741824'), Decimal('-1.5E+3'))
        >>> parse_quantity("1K")
        Traceback (most recent call last):
        ...
        ValueError: '1K' is not a Kubernetes quantity
    """
    match = re.fullmatch(_QUANTITY, text)  # compiled by re's cache on first use
    if match is None:
        raise ValueError(f"{text!r} is not a Kubernetes quantity")
    number, exponent = match["number"], match["exponent"]
    try:
        # Built from the string so that a large exponent stays exact: no context rounding.
        if exponent is not None:
            return Decimal(f"{number}e{exponent}")
        return Decimal(number) * _MULTIPLIER[match["suffix"] or ""]
    except DecimalException as exc:  # beyond what Decimal can hold
        raise ValueError(f"{text!r} is not a Kubernetes quantity") from exc


def quantity(value: Any) -> Decimal:
    """A quantity read from a cluster object as a number (0 for what does not parse).

    Example:
        >>> quantity("16"), quantity("500m"), quantity("1Gi"), quantity(8), quantity("x")
        (Decimal('16'), Decimal('0.500'), Decimal('1073741824'), Decimal('8'), Decimal('0'))
    """
    try:
        return parse_quantity(str(value).strip())
    except ValueError:
        return Decimal(0)


def check_quantity(field: str, value: str | None) -> None:
    """Raise `SpecError` unless `value` is a positive Kubernetes quantity (at most 2**63 - 1).

    Example:
        >>> check_quantity("memory", "16Gi")
        >>> check_quantity("cpu", "-1")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: cpu='-1' is not a positive Kubernetes quantity ...
    """
    if value is None:
        return
    try:
        usable = 0 < parse_quantity(value) <= _LARGEST
    except ValueError:
        usable = False
    if not usable:
        raise fail(
            f"{field}={value!r} is not a positive Kubernetes quantity",
            rule="a quantity is a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, ...) "
            "and a request must be above zero",
            fix=_EXAMPLES.get(field, f"{field}='1'"),
            field=field,
        )


# Bounded digit runs: an int of thousands of digits would exceed Python's int parsing limit.
_DURATION = (
    r"^\s*(?:([0-9]{1,9})d)?\s*(?:([0-9]{1,9})h)?\s*(?:([0-9]{1,9})m)?\s*(?:([0-9]{1,9})s)?\s*\Z"
)


def duration_seconds(value: Any, field: str) -> Any:
    """Seconds of a duration string ("90m", "2h", "1d12h"); other values pass unchanged.

    Example:
        >>> duration_seconds("1d12h", "max_runtime"), duration_seconds(60, "max_runtime")
        (129600, 60)
    """
    if isinstance(value, str) and not value.strip().isdigit():
        match = re.match(_DURATION, value)  # compiled by re's cache on first use
        if not value.strip() or match is None:
            raise fail(
                f"{field}={value!r} is not a duration",
                rule="durations are seconds or a mix of d/h/m/s units",
                fix=f"{field}='2h30m' or {field}=9000",
                field=field,
            )
        d, h, m, s = (int(g or 0) for g in match.groups())
        return ((d * 24 + h) * 60 + m) * 60 + s
    return value
