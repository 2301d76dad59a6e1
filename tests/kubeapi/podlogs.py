"""Pod log texts set by tests, served by `pods/log` (with `follow=true` streaming and
`timestamps=true` times). Each text is kept as the container runtime keeps it: one entry per
line (or unfinished piece of a line) with the time it arrived, from `clock` (nanoseconds since
the epoch) unless a test gives one; kubelet prefixes each entry with that time, RFC 3339 with
nine fraction digits (its RFC3339NanoFixed), and a space."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable

LogKey = tuple[str, str, str]  # (namespace, pod, container or "")
Entry = tuple[int, str]  # (nanoseconds since the epoch, a line with its newline, or a piece)
_PIECES = re.compile(r"[^\n]*\n|[^\n]+$")


def render(entries: list[Entry], timestamps: bool) -> str:
    """The log text kubelet sends for `entries`, each after its time with `timestamps`."""
    return "".join((stamp(at) + " " if timestamps else "") + text for at, text in entries)


def stamp(ns: int) -> str:
    """kubelet's time format (Go's RFC3339NanoFixed, in UTC)."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanos:09d}Z"


class PodLogs:
    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self.clock = clock
        self._cond = threading.Condition()
        self._entries: dict[LogKey, list[Entry]] = {}
        self._closed: set[LogKey] = set()

    def _key(self, namespace: str, pod: str, container: str | None) -> LogKey:
        return (namespace, pod, container or "")

    def _pieces(self, text: str, at: int | None) -> list[Entry]:
        when = self.clock() if at is None else at
        return [(when, piece) for piece in _PIECES.findall(text)]

    def set(
        self, namespace: str, pod: str, text: str, container: str | None = None,
        at: int | None = None,
    ) -> None:  # fmt: skip
        with self._cond:
            key = self._key(namespace, pod, container)
            old = self._entries.get(key, [])
            kept = "".join(piece for _, piece in old)
            if kept and text.startswith(kept):  # a log that grew: the old lines keep their times
                self._entries[key] = old + self._pieces(text[len(kept) :], at)
            else:
                self._entries[key] = self._pieces(text, at)
            self._closed.discard(key)
            self._cond.notify_all()

    def append(
        self, namespace: str, pod: str, text: str, container: str | None = None,
        at: int | None = None,
    ) -> None:  # fmt: skip
        with self._cond:
            key = self._key(namespace, pod, container)
            self._entries.setdefault(key, []).extend(self._pieces(text, at))
            self._cond.notify_all()

    def close(self, namespace: str, pod: str, container: str | None = None) -> None:
        """End `follow` streams for this log even if the pod is still running."""
        with self._cond:
            self._closed.add(self._key(namespace, pod, container))
            self._cond.notify_all()

    def read(self, namespace: str, pod: str, container: str | None) -> tuple[list[Entry], bool]:
        """(entries, closed) of the container, falling back to the pod-wide log."""
        with self._cond:
            key = self._key(namespace, pod, container)
            if key not in self._entries and container:
                key = self._key(namespace, pod, None)
            return list(self._entries.get(key, [])), key in self._closed

    def wait(self, timeout: float) -> None:
        with self._cond:
            self._cond.wait(timeout)

    def kick(self) -> None:
        with self._cond:
            self._cond.notify_all()
