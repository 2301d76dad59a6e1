"""Shared watch streams: one informer per kind, namespace and selector, however many waits,
log followers and controllers of one backend follow it from however many threads; each
follower reads its own queue (`StreamHub`), and the informer closes with its last follower."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from gkeml_sdk.backends.kubernetes.api.informer import Backoff, Event, Informer, Sink, StreamSpec
from gkeml_sdk.backends.kubernetes.api.kube import KubeClient

__all__ = ["Backoff", "Event", "SharedStreams", "StreamHub", "StreamSpec", "deadline"]


class SharedStreams:
    """The informers of one backend, shared and counted by subscribers: a stream opens with
    its first subscriber and stops (its thread joined) when the last one leaves.

    Example:
        >>> streams = SharedStreams(kube, watch_seconds=300)  # doctest: +SKIP
        >>> with StreamHub(streams, [StreamSpec(pods, "ml", "app")]) as hub:  # doctest: +SKIP
        ...     event = hub.next(timeout=1.0)
    """

    def __init__(
        self, kube: KubeClient, *, watch_seconds: int = 300, backoff: Backoff | None = None
    ) -> None:
        self.kube = kube
        self.watch_seconds = watch_seconds
        self.backoff = backoff or Backoff()
        self._lock = threading.Lock()
        self._informers: dict[StreamSpec, Informer] = {}
        self._closed_connections = 0  # opened by informers that have stopped since

    def subscribe(self, spec: StreamSpec, sink: Sink) -> Informer:
        """Send `sink` the stream of `spec` (its cache first when it is already open); the
        objects of `spec.known` found gone are reported DELETED to `sink` alone."""
        with self._lock:
            informer = self._informers.get(spec)
            if informer is None or informer.failed:
                shared = StreamSpec(
                    spec.resource, spec.namespace, spec.label_selector, transform=spec.transform
                )
                informer = Informer(
                    self.kube, shared, watch_seconds=self.watch_seconds, backoff=self.backoff
                )
                self._informers[spec] = informer
                missing = informer.subscribe(sink, spec.known)  # before its first list
                informer.start()
            else:
                missing = informer.subscribe(sink, spec.known)
        try:
            informer.check_gone(sink, missing)
        except BaseException:
            self.unsubscribe(informer, sink)
            raise
        return informer

    def unsubscribe(self, informer: Informer, sink: Sink) -> None:
        """Stop sending to `sink`; the last subscriber to leave stops the stream and waits
        for its thread to end."""
        with self._lock:
            if informer.unsubscribe(sink):
                return
            if self._informers.get(informer.spec) is informer:
                del self._informers[informer.spec]
            self._closed_connections += informer.connections
        informer.stop()
        informer.join(timeout=5)

    @property
    def open(self) -> int:
        """Streams open now (each holds at most one watch connection)."""
        with self._lock:
            return len(self._informers)

    @property
    def subscribers(self) -> int:
        """Subscriptions to the open streams, counted per stream (a wait follows three)."""
        with self._lock:
            informers = list(self._informers.values())
        return sum(i.subscribers for i in informers)

    @property
    def connections(self) -> int:
        """Watch connections opened so far by every stream, open or stopped."""
        with self._lock:
            live = sum(i.connections for i in self._informers.values())
            return self._closed_connections + live


class EventQueue:
    """The events one follower drains, in the order they came; a stream's failure (an ERROR
    event) is raised in the follower's thread.

    Example:
        >>> q = EventQueue()
        >>> q.put(Event("Pod", "ADDED", {}))
        >>> q.next(timeout=0).type, q.next(timeout=0)
        ('ADDED', None)
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[Event] = queue.Queue()

    def put(self, event: Event) -> None:
        """Take one event (called from a stream's thread)."""
        self._queue.put(event)

    def next(self, timeout: float) -> Event | None:
        """The next event, or None after `timeout` seconds without one."""
        try:
            event = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None
        if event.type == "ERROR":
            raise event.obj["error"]
        return event


class StreamHub(EventQueue):
    """One follower's view of several shared streams: their events in one queue that the
    following thread drains. Given a `KubeClient` instead of `SharedStreams`, it opens
    streams of its own (with `watch_seconds` and `backoff`).

    Example:
        >>> hub = StreamHub(streams, [StreamSpec(jobsets, "ml", "app")])  # doctest: +SKIP
        >>> with hub:  # doctest: +SKIP
        ...     event = hub.next(timeout=1.0)
    """

    def __init__(
        self,
        source: SharedStreams | KubeClient,
        specs: list[StreamSpec],
        *,
        watch_seconds: int = 300,
        backoff: Backoff | None = None,
    ) -> None:
        if isinstance(source, KubeClient):
            source = SharedStreams(source, watch_seconds=watch_seconds, backoff=backoff)
        super().__init__()
        self.streams = source
        self.specs = specs
        self._sink: Sink = self.put  # one bound method: the same sink to unsubscribe
        self.informers: list[Informer] = []  # those joined, in `specs` order

    def __enter__(self) -> StreamHub:
        try:
            for spec in self.specs:
                self.informers.append(self.streams.subscribe(spec, self._sink))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        joined, self.informers = self.informers, []
        for informer in joined:
            self.streams.unsubscribe(informer, self._sink)


def deadline(timeout: float | None) -> Callable[[], float]:
    """Seconds left until `timeout` from now (infinite when None)."""
    end = None if timeout is None else time.monotonic() + timeout
    return lambda: float("inf") if end is None else end - time.monotonic()
