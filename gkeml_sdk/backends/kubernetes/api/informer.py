"""One list+watch of a kind in a namespace, fanned out to every subscriber: resumed from the
last resourceVersion after a drop (backing off while the server keeps closing watches),
relisted on 410 Gone (reporting what vanished meanwhile), with a cache that a subscriber
joining late receives first."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient, WatchExpired, WatchStream
from gkeml_sdk.backends.kubernetes.api.resources import Resource
from gkeml_sdk.backends.kubernetes.api.transport import UNAVAILABLE, TransientError
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError, GkemlError

log = logging.getLogger(__name__)
Sink = Callable[["Event"], None]


@dataclass(frozen=True)
class Event:
    """One change seen on a stream: `type` is ADDED, MODIFIED, DELETED or SYNCED (a relist,
    or the stream's cache as a late subscriber first receives it)."""

    kind: str
    type: str
    obj: Obj


@dataclass(frozen=True)
class StreamSpec:
    """What one informer follows. `known` are objects the subscriber knows exist (at least
    `metadata.name`, `namespace`, `uid`): one that turns out gone is reported DELETED to it,
    as one seen and then missed by a relist is. Specs equal but for `known` share a stream.

    Example:
        >>> from gkeml_sdk.backends.kubernetes.api.resources import resource
        >>> pods = resource("v1", "Pod")
        >>> StreamSpec(pods, "ml", "app") == StreamSpec(pods, "ml", "app", known=({},))
        True
    """

    resource: Resource
    namespace: str
    label_selector: str = ""
    known: tuple[Obj, ...] = field(default=(), compare=False)
    # What the stream keeps and hands out of each object (client-go's SetTransform): a
    # follower that reads only some fields holds only those. Streams that transform alike
    # (the same function) are shared.
    transform: Callable[[Obj], Obj] | None = None


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
    """List, then watch from the list's resourceVersion, until stopped: resumes after drops
    (with `Backoff` while watches keep failing) and relists after 410 Gone. Every event goes
    to every subscriber's sink, in order; a fatal error is sent as an Event of type ERROR
    whose obj holds the exception (and to whoever subscribes after it).

    Example:
        >>> informer = Informer(kube, StreamSpec(pods, "ml", "app"))  # doctest: +SKIP
        >>> informer.start(); informer.subscribe(events.put, known=())  # doctest: +SKIP
    """

    def __init__(
        self,
        kube: KubeClient,
        spec: StreamSpec,
        *,
        watch_seconds: int = 300,
        backoff: Backoff | None = None,
    ) -> None:
        super().__init__(daemon=True, name=f"gkeml-watch-{spec.resource.plural}")
        self.kube, self.spec = kube, spec
        self.watch_seconds = watch_seconds
        self.backoff = backoff or Backoff()
        self._stop_event = threading.Event()
        self._stream: WatchStream | None = None
        # Held while an event is handed out and while a subscriber joins: a joiner gets the
        # cache and then exactly the events after it.
        self._lock = threading.Lock()
        self._sinks: list[Sink] = []
        self._lists = 0  # lists started: a list judges only what was awaited before it began
        self._listing = False  # a list is under way
        self._listed = False
        self.synced = threading.Event()  # set once listed (or failed): the cache is usable
        self._on_listed: list[Callable[[], None]] = []  # called once the first list went out
        self._error: GkemlError | None = None
        # Last object seen per namespace/name: a relist reports those now missing as DELETED.
        self._cache: dict[tuple[str, str], Obj] = {}
        # Objects subscribers know exist that the stream has not shown yet, by uid, with the
        # number of lists started when they were awaited: a later list without them reports
        # them DELETED.
        self._awaited: dict[str, tuple[Obj, int]] = {}
        self.connections = 0  # watch connections opened (resumes and relists included)
        self.delivered = 0  # events received on watches (not from lists, not bookmarks)

    @property
    def failed(self) -> bool:
        """True once the stream ended on an error it cannot outlive (e.g. 403)."""
        return self._error is not None

    @property
    def subscribers(self) -> int:
        """Sinks the stream sends to now."""
        with self._lock:
            return len(self._sinks)

    def subscribe(self, sink: Sink, known: tuple[Obj, ...]) -> list[Obj]:
        """Send `sink` the cache (when listed) and every event from now on. Returns the
        `known` objects the listed cache lacks: the caller reads them (`check_gone`), since
        a cache lagging behind the server cannot tell "not yet seen" from "already gone"."""
        with self._lock:
            self._sinks.append(sink)
            if self._error is not None:
                sink(Event(self.spec.resource.kind, "ERROR", {"error": self._error}))
                return []
            missing = [k for k in known if _uid(k) and not self._shown(k)]
            for obj in missing:
                self._awaited[_uid(obj)] = (obj, self._lists)
            if self._listed:
                for obj in self._cache.values():
                    sink(Event(self.spec.resource.kind, "SYNCED", obj))
            # A list not started yet decides, and the informer reads again what a list under
            # way lacks (it may predate `known`); else the cache may lag: the caller reads.
            return missing if self._listed and not self._listing else []

    def expect(self, known: tuple[Obj, ...]) -> list[Obj]:
        """What `subscribe` does with `known`, for a subscriber that joined already (one
        sink routing events to many followers): await them, and return those to read
        (`check_gone`) because the listed cache lacks them."""
        with self._lock:
            missing = [k for k in known if _uid(k) and not self._shown(k)]
            for obj in missing:
                self._awaited[_uid(obj)] = (obj, self._lists)
            return missing if self._listed and not self._listing else []

    def check_gone(self, sink: Sink | None, missing: list[Obj]) -> None:
        """Read each of `missing` (from `subscribe`) and tell `sink` (every subscriber when
        None) of those gone or replaced; the others will come on the stream, which resumes
        from a version older than this read (or a later relist reports them gone)."""
        for obj in missing:
            meta = obj["metadata"]
            now = self.kube.find(self.spec.resource, meta["name"], meta["namespace"])
            if now is None or _uid(now) != _uid(obj):
                with self._lock:
                    awaited = self._awaited.pop(_uid(obj), None) is not None
                    gone = Event(self.spec.resource.kind, "DELETED", obj)
                    if sink is not None:
                        sink(gone)
                    elif awaited:  # not shown meanwhile: nobody heard of it yet
                        self._send(gone)

    def when_listed(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the first list was handed to the subscribers, before any
        event after it (from the stream's thread, holding the lock that orders its events);
        at once when it was already."""
        with self._lock:
            if not self._listed:
                self._on_listed.append(callback)
                return
        callback()

    def unsubscribe(self, sink: Sink) -> int:
        """Stop sending to `sink`; returns how many subscribers are left."""
        with self._lock:
            if sink in self._sinks:
                self._sinks.remove(sink)
            return len(self._sinks)

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
                with self._lock:
                    self._error = exc
                    self._send(Event(self.spec.resource.kind, "ERROR", {"error": exc}))
            self.synced.set()

    def stop(self) -> None:
        """End the watch now (closes the connection)."""
        self._stop_event.set()
        stream = self._stream
        if stream is not None:
            stream.close()

    def _relist(self) -> str:
        with self._lock:
            self._lists += 1
            started, self._listing = self._lists, True
        try:
            items, version = self.kube.list(
                self.spec.resource, self.spec.namespace, label_selector=self.spec.label_selector
            )
        finally:
            with self._lock:
                self._listing = False
        if self.spec.transform is not None:
            items = [self.spec.transform(item) for item in items]
        fresh = {_key(item): item for item in items}
        uids = {_uid(item) for item in items}
        with self._lock:
            for key, last in list(self._cache.items()):
                now = fresh.get(key)
                if now is None or _uid(now) != _uid(last):
                    self._emit("DELETED", last)  # deleted (or replaced) while we were not watching
            unsure = []  # awaited while the list was under way: it may predate them
            for uid, (awaited, since) in list(self._awaited.items()):
                if uid in uids:
                    continue
                if since < started:
                    self._emit("DELETED", awaited)  # made and deleted before we could see it
                else:
                    unsure.append(awaited)
            for item in items:
                self._emit("SYNCED", item)
            self._listed = True
            listed, self._on_listed = self._on_listed, []
            for callback in listed:
                callback()
        self.synced.set()
        self.check_gone(None, unsure)
        return version

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
                if self.spec.transform is not None:
                    obj = self.spec.transform(obj)
                with self._lock:
                    self._emit(event_type, obj)
        return version

    def _emit(self, event_type: str, obj: Obj) -> None:
        # Called holding the lock.
        self._awaited.pop(_uid(obj), None)
        if event_type == "DELETED":
            self._cache.pop(_key(obj), None)
        else:
            self._cache[_key(obj)] = obj
        self._send(Event(self.spec.resource.kind, event_type, obj))

    def _send(self, event: Event) -> None:
        for sink in self._sinks:
            sink(event)

    def _shown(self, obj: Obj) -> bool:
        seen = self._cache.get(_key(obj))
        return seen is not None and _uid(seen) == _uid(obj)


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))
