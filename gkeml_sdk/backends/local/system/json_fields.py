"""Strict reading of the JSON files a local run keeps (`state.json`, `launch.json`,
`supervisor.json`): each value is checked for the type gkeml writes, so a damaged or
hand-edited file is one `ShapeError` naming the field, never a KeyError or TypeError from
deep inside. Standard library only: the supervisor reads these files at its start."""

from __future__ import annotations

import json
import math
from typing import Any

# The most a local run file may hold: what gkeml writes is a few kilobytes (a state with a
# long restart history some hundred); a bigger file was not written by it.
MAX_FILE_BYTES = 8 * 1024 * 1024
_MISSING: Any = object()


class ShapeError(ValueError):
    """A file or field that is not what gkeml writes; `str()` says which and why."""


def parse_json(raw: bytes) -> object:
    """The JSON value of `raw`, read by gkeml's limits: at most `MAX_FILE_BYTES`, UTF-8,
    nested no deeper than Python's recursion allows. Raises `ShapeError`.

    Example:
        >>> parse_json(b'{"a": 1}')
        {'a': 1}
        >>> try:
        ...     parse_json(b"[" * 100_000)
        ... except ShapeError as exc:
        ...     print(exc)
        nested too deep to be a file gkeml wrote
    """
    if len(raw) > MAX_FILE_BYTES:
        raise ShapeError(f"{len(raw):,} bytes, more than the {MAX_FILE_BYTES:,} gkeml ever writes")
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ShapeError("nested too deep to be a file gkeml wrote") from None
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        text = str(exc)
        raise ShapeError(f"no JSON ({text[:120]})") from None


class Fields:
    """The fields of one JSON object, each read as the type gkeml writes it.

    Example:
        >>> f = Fields({"pid": 7, "start": True}, "supervisor.json")
        >>> f.whole("pid")
        7
        >>> try:
        ...     f.whole("start")
        ... except ShapeError as exc:
        ...     print(exc)  # doctest: +ELLIPSIS
        supervisor.json: start is a boolean, ...
    """

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise ShapeError(f"{where} is {_kind(data)}, not an object")
        self.data: dict[str, object] = data
        self.where = where

    def text(self, key: str, default: str = _MISSING) -> str:
        """A string."""
        value = self._get(key, default)
        if not isinstance(value, str):
            raise self._wrong(key, value, "a string")
        return value

    def optional_text(self, key: str) -> str | None:
        """A string, or None when absent or null."""
        return None if self.data.get(key) is None else self.text(key)

    def whole(self, key: str, default: int = _MISSING) -> int:
        """An integer (a boolean is not one)."""
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong(key, value, "a whole number")
        return value

    def number(self, key: str, default: float = _MISSING) -> float:
        """A finite number."""
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._wrong(key, value, "a number")
        if not math.isfinite(value):
            raise ShapeError(f"{self.where}: {key} is {value}, not a finite number")
        return float(value)

    def optional_number(self, key: str) -> float | None:
        """A finite number, or None when absent or null."""
        return None if self.data.get(key) is None else self.number(key)

    def flag(self, key: str) -> bool:
        """A boolean."""
        value = self._get(key, _MISSING)
        if not isinstance(value, bool):
            raise self._wrong(key, value, "true or false")
        return value

    def objects(self, key: str) -> list[Fields]:
        """A list of objects (empty when absent)."""
        value = self._get(key, [])
        if not isinstance(value, list):
            raise self._wrong(key, value, "a list")
        return [Fields(item, f"{self.where}: {key}[{i}]") for i, item in enumerate(value)]

    def nested(self, key: str) -> Fields:
        """An object (empty when absent)."""
        return Fields(self._get(key, {}), f"{self.where}: {key}")

    def texts(self, key: str) -> list[str]:
        """A list of strings (empty when absent)."""
        value = self._get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._wrong(key, value, "a list of strings")
        return list(value)

    def text_map(self, key: str) -> dict[str, str]:
        """An object of string values (empty when absent)."""
        inner = self.nested(key)
        return {name: inner.text(name) for name in inner.data}

    def whole_map(self, key: str) -> dict[str, int]:
        """An object of whole-number values (empty when absent)."""
        inner = self.nested(key)
        return {name: inner.whole(name) for name in inner.data}

    def _get(self, key: str, default: object) -> object:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise ShapeError(f"{self.where}: {key} is missing")
        return default

    def _wrong(self, key: str, value: object, expected: str) -> ShapeError:
        return ShapeError(f"{self.where}: {key} is {_kind(value)}, not {expected}")


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
