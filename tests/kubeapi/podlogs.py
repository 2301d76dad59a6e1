"""Pod log texts set by tests, served by `pods/log` (with `follow=true` streaming)."""

from __future__ import annotations

import threading

LogKey = tuple[str, str, str]  # (namespace, pod, container or "")


class PodLogs:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._text: dict[LogKey, str] = {}
        self._closed: set[LogKey] = set()

    def _key(self, namespace: str, pod: str, container: str | None) -> LogKey:
        return (namespace, pod, container or "")

    def set(self, namespace: str, pod: str, text: str, container: str | None = None) -> None:
        with self._cond:
            key = self._key(namespace, pod, container)
            self._text[key] = text
            self._closed.discard(key)
            self._cond.notify_all()

    def append(self, namespace: str, pod: str, text: str, container: str | None = None) -> None:
        with self._cond:
            key = self._key(namespace, pod, container)
            self._text[key] = self._text.get(key, "") + text
            self._cond.notify_all()

    def close(self, namespace: str, pod: str, container: str | None = None) -> None:
        """End `follow` streams for this log even if the pod is still running."""
        with self._cond:
            self._closed.add(self._key(namespace, pod, container))
            self._cond.notify_all()

    def read(self, namespace: str, pod: str, container: str | None) -> tuple[str, bool]:
        """(text, closed) for the container, falling back to the pod-wide log."""
        with self._cond:
            key = self._key(namespace, pod, container)
            if key not in self._text and container:
                key = self._key(namespace, pod, None)
            return self._text.get(key, ""), key in self._closed

    def wait(self, timeout: float) -> None:
        with self._cond:
            self._cond.wait(timeout)

    def kick(self) -> None:
        with self._cond:
            self._cond.notify_all()
