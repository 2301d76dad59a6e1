"""Shared watch streams: one list+watch per kind and namespace, however many runs are
followed, resumed from the last resourceVersion after a drop (backing off while the server
keeps closing them) and relisted on 410 Gone (reporting what vanished meanwhile)."""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gkeml_sdk.backends.kubernetes.kube import KubeClient, WatchExpired, WatchStream
from gkeml_sdk.backends.kubernetes.resources import Resource
from gkeml_sdk.backends.kubernetes.transport import UNAVAILABLE, TransientError
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError, GkemlError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """One change seen on a stream: `type` is ADDED, MODIFIED, DELETED or SYNCED (a relist)."""

    kind: str
    type: str
    obj: Obj


@dataclass(frozen=True)
class StreamSpec:
    """What one informer follows. `known` are objects the caller already knows exist (at least
    `metadata.name`, `namespace`, `uid`): one missing from the first list is reported DELETED,
    as one seen and then missed by a relist is."""

    resource: Resource
    namespace: str
    label_selector: str = ""
    known: tuple[Obj, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Backoff:
    """Pause before reopening a watch that ended without doing its job: exponential from
    `first` seconds, capped at `cap`, with full jitter (so many clients cut at once do not
    come back together). A watch that delivered an event or stayed open `healthy_after`
    seconds counts as healthy and resets the count.

    Example:
        >>> backoff = Backoff(first=0.2, cap=30.0)
        >>> 0.0 <= backoff.delay(3) <= 0.8 and backoff.delay(100) <= 30.0
        True
    """

    first: float = 0.2
    cap: float = 30.0
    healthy_after: float = 10.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, failures: int) -> float:
        """Seconds to wait after `failures` unhealthy watches in a row (1 or more)."""
        ceiling = min(self.cap, self.first * 2.0 ** min(failures - 1, 64))
        return self.rng.uniform(0.0, ceiling)


class Informer(threading.Thread):
    """List, then watch from the list's resourceVersion, forever: resumes after drops (with
    `Backoff` while watches keep failing) and relists after 410 Gone. Events go to `sink`; a
    fatal error is sent as an Event of type ERROR whose obj holds the exception."""

    def __init__(
        self,
        kube: KubeClient,
        spec: StreamSpec,
        sink: Callable[[Event], None],
        *,
        watch_seconds: int = 300,
        backoff: Backoff | None = None,
    ) -> None:
        super().__init__(daemon=True, name=f"gkeml-watch-{spec.resource.plural}")
        self.kube, self.spec, self.sink = kube, spec, sink
        self.watch_seconds = watch_seconds
        self.backoff = backoff or Backoff()
        self._stop_event = threading.Event()
        self._stream: WatchStream | None = None
        # Last object seen per namespace/name: a relist reports those now missing as DELETED.
        self._known: dict[tuple[str, str], Obj] = {_key(o): o for o in spec.known}
        self.connections = 0  # watch connections opened (resumes and relists included)
        self.delivered = 0  # events received on watches (not from lists, not bookmarks)

    def run(self) -> None:
        failures = 0
        try:
            version = self._relist()
            while not self._stop_event.is_set():
                opened, delivered = time.monotonic(), self.delivered
                try:
                    version = self._watch_from(version)
                except WatchExpired:
                    version = self._relist()
                except TransientError as exc:
                    log.info("watch %s dropped (%s); resuming", self.spec.resource.plural, exc)
                except ClusterError as exc:
                    # The transport gave up on a transient outage; a run outlives one, so
                    # keep backing off (the caller's timeout bounds the wait).
                    if exc.reason != UNAVAILABLE:
                        raise
                    log.info("watch %s unavailable (%s); retrying", self.spec.resource.plural, exc)
                lasted = time.monotonic() - opened
                healthy = self.delivered > delivered or lasted >= min(
                    self.backoff.healthy_after, self.watch_seconds / 2
                )
                failures = 0 if healthy else failures + 1
                if failures:
                    self._stop_event.wait(self.backoff.delay(failures))
        except GkemlError as exc:
            if not self._stop_event.is_set():
                self.sink(Event(self.spec.resource.kind, "ERROR", {"error": exc}))

    def stop(self) -> None:
        """End the watch now (closes the connection)."""
        self._stop_event.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def _relist(self) -> str:
        items, version = self.kube.list(
            self.spec.resource, self.spec.namespace, label_selector=self.spec.label_selector
        )
        fresh = {_key(item): item for item in items}
        for key, last in list(self._known.items()):
            now = fresh.get(key)
            if now is None or _uid(now) != _uid(last):
                self._emit("DELETED", last)  # deleted (or replaced) while we were not watching
        for item in items:
            self._emit("SYNCED", item)
        return version

    def _emit(self, event_type: str, obj: Obj) -> None:
        if event_type == "DELETED":
            self._known.pop(_key(obj), None)
        else:
            self._known[_key(obj)] = obj
        self.sink(Event(self.spec.resource.kind, event_type, obj))

    def _watch_from(self, version: str) -> str:
        stream = self.kube.watch(
            self.spec.resource,
            self.spec.namespace,
            resource_version=version,
            label_selector=self.spec.label_selector,
            timeout_seconds=self.watch_seconds,
        )
        self._stream = stream
        self.connections += 1
        if self._stop_event.is_set():
            stream.close()
        for event_type, obj in stream:
            version = str(obj.get("metadata", {}).get("resourceVersion", version))
            if event_type != "BOOKMARK":
                self.delivered += 1
                self._emit(event_type, obj)
        return version


class StreamHub:
    """Several informers feeding one queue that the waiting thread drains.

    Example:
        >>> hub = StreamHub(kube, [StreamSpec(jobsets, "ml", "gkeml.dev/run-id")])  # doctest: +SKIP
        >>> with hub:  # doctest: +SKIP
        ...     event = hub.next(timeout=1.0)
    """

    def __init__(self, kube: KubeClient, specs: list[StreamSpec], **informer_args: Any) -> None:
        self._queue: queue.Queue[Event] = queue.Queue()
        self.informers = [Informer(kube, s, self._queue.put, **informer_args) for s in specs]

    def __enter__(self) -> StreamHub:
        for informer in self.informers:
            informer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for informer in self.informers:
            informer.stop()
        for informer in self.informers:
            informer.join(timeout=5)

    def next(self, timeout: float) -> Event | None:
        """The next event, or None after `timeout` seconds without one."""
        try:
            event = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None
        if event.type == "ERROR":
            raise event.obj["error"]
        return event

    @property
    def connections(self) -> int:
        """Watch connections opened so far by every informer."""
        return sum(i.connections for i in self.informers)


def deadline(timeout: float | None) -> Callable[[], float]:
    """Seconds left until `timeout` from now (infinite when None)."""
    end = None if timeout is None else time.monotonic() + timeout
    return lambda: float("inf") if end is None else end - time.monotonic()


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))
