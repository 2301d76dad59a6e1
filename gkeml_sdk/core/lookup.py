"""Resolving short names to catalog rows, with the closest match when a name is unknown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

T = TypeVar("T")


class UnknownName(LookupError):
    """A name that no row answers to; carries the valid names and the closest match."""

    def __init__(
        self, kind: str, name: str, valid: Iterable[str], known: Iterable[str] = ()
    ) -> None:
        self.kind = kind
        self.name = name
        self.valid = list(dict.fromkeys(valid))
        import difflib  # only an unknown name needs it

        candidates = [*self.valid, *known]
        close = difflib.get_close_matches(name.lower(), candidates, n=1, cutoff=0.5)
        self.closest = close[0] if close else None
        hint = f" Did you mean {self.closest!r}?" if self.closest else ""
        super().__init__(f"unknown {kind} {name!r}.{hint} Valid: {', '.join(self.valid)}")


class AmbiguousName(UnknownName):
    """A name several rows answer to (`A100`: 40 or 80 GB): refused with each choice and what
    tells them apart, never resolved to one by guessing."""

    def __init__(self, kind: str, name: str, choices: Mapping[str, str]) -> None:
        self.kind = kind
        self.name = name
        self.valid = list(choices)
        self.closest = None
        told = " or ".join(f"{key!r} ({meaning})" for key, meaning in choices.items())
        LookupError.__init__(self, f"{kind} {name!r} is ambiguous: {told}")


def resolve(kind: str, name: str, table: Mapping[str, T], shown: Iterable[str] = ()) -> T:
    """Find `name` (case-insensitive, `_` or `-`) in `table` keyed by lower-case names.

    `shown` are the canonical names listed in the error; every key may be the closest match.

    Example:
        >>> resolve("GPU", "H100", {"h100": 1})
        1
    """
    key = name.strip().lower().replace("_", "-")
    try:
        return table[key]
    except KeyError:
        raise UnknownName(kind, name, shown or table.keys(), table.keys()) from None
