"""What a field given a value of the wrong type should have been, as an example made from the
value given: `command="python train.py"` -> `a list: command=['python', 'train.py']`."""

from __future__ import annotations

import math
import re
import shlex
from typing import Any

_PAIR = re.compile(r"[\s,]+")


def expected_example(error_type: str, field: str, given: Any) -> str | None:
    """The type a pydantic `error_type` asked for, with `field=` written that way; None for an
    error that is not about the type.

    Example:
        >>> print(expected_example("list_type", "command", "python train.py"))
        a list: command=['python', 'train.py']
        >>> print(expected_example("dict_type", "env", ["LR=0.1", "EPOCHS=3"]))
        a dict: env={'LR': '0.1', 'EPOCHS': '3'}
        >>> print(expected_example("int_parsing", "nodes", "two"))
        a whole number: nodes=2
    """
    kind = error_type.split("_")[0]
    if kind in ("list", "tuple", "set"):
        return f"a list: {field}={_as_list(given)!r}"
    if kind == "dict":
        return f"a dict: {field}={_as_dict(given)!r}"
    if kind == "int":
        whole = int(given) if isinstance(given, float) and math.isfinite(given) else 2
        return f"a whole number: {field}={whole}"
    if kind == "float":
        return f"a number: {field}=1.5"
    if kind == "bool":
        return f"True or False: {field}=True"
    if kind == "string":
        return f"a string: {field}={str(given)!r}"
    return None


def _as_list(given: Any) -> list[Any]:
    if isinstance(given, str):
        try:
            return shlex.split(given)
        except ValueError:  # an unbalanced quote: words are still words
            return given.split()
    if isinstance(given, dict | bytes) or not hasattr(given, "__iter__"):
        return [given]
    return list(given)


def _as_dict(given: Any) -> dict[str, str]:
    if isinstance(given, str):
        items: list[Any] = [w for w in _PAIR.split(given) if w]
    elif isinstance(given, list | tuple):
        items = list(given)
    else:
        items = []
    pairs = [str(item).partition("=") for item in items]
    if pairs and all(sep and key for key, sep, _ in pairs):
        return {key: value for key, _, value in pairs}
    return {"KEY": "value"}
