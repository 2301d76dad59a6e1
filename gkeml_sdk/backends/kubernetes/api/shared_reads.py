"""Reads that each run of a listing would make on its own (the Workloads a preemptor is looked
for in, a LocalQueue's pending workloads), made once for all of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from gkeml_sdk.errors import GkemlError

T = TypeVar("T")


class SharedReads:
    """The answer (or the error) of each read, by what it reads, for as long as one listing
    lasts: the runs of a listing are classified from one moment of the cluster.

    Example:
        >>> reads = SharedReads()
        >>> reads.once(("workloads", "ml"), lambda: ["w1"]), reads.once(("workloads", "ml"), list)
        (['w1'], ['w1'])
    """

    def __init__(self) -> None:
        self._answers: dict[tuple[str, ...], tuple[Any, GkemlError | None]] = {}

    def once(self, key: tuple[str, ...], read: Callable[[], T]) -> T:
        """`read()`'s answer the first time `key` is asked for; the same answer (or error)
        every later time."""
        if key not in self._answers:
            try:
                self._answers[key] = (read(), None)
            except GkemlError as exc:
                self._answers[key] = (None, exc)
        answer, error = self._answers[key]
        if error is not None:
            raise error
        found: T = answer
        return found
