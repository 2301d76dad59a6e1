"""Events of the shared streams, each handed only to the waits that follow its run: one
subscription per stream for every wait of a service, an index by namespace and run name, so
following N runs from one `wait_all` or from N threads costs O(N), not O(N) per event."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

from gkeml_sdk.backends.kubernetes.api.informer import Informer
from gkeml_sdk.backends.kubernetes.api.streams import Event, EventQueue, SharedStreams, StreamSpec
from gkeml_sdk.core.environment import ATTEMPT_SEPARATOR
from gkeml_sdk.core.labels import RUN_ID_LABEL
from gkeml_sdk.core.objects import Obj

RunKey = tuple[str, str]  # (namespace, run name)
LISTED = "LISTED"  # a route's word to its waits that its stream listed (never returned)


def run_of(event: Event) -> list[RunKey]:
    """The runs an object of the streams belongs to: a job's or pod's run-id label (else an
    attempt's name: `<run>` or `<run>--rN`), a Workload's owning attempt.

    Example:
        >>> owner = {"kind": "JobSet", "name": "ft--r2"}
        >>> run_of(Event("Workload", "ADDED", {"metadata": {"namespace": "ml",
        ...     "ownerReferences": [owner]}}))
        [('ml', 'ft')]
    """
    meta = event.obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or "")
    if event.kind == "Workload":
        owners = [str(ref.get("name") or "") for ref in meta.get("ownerReferences") or []]
        return [(namespace, name.split(ATTEMPT_SEPARATOR)[0]) for name in owners if name]
    # An object known by name only (an attempt awaited, found gone) has no labels.
    run = (meta.get("labels") or {}).get(RUN_ID_LABEL)
    run = run or str(meta.get("name") or "").split(ATTEMPT_SEPARATOR)[0]
    return [(namespace, str(run))] if run else []


@dataclass(eq=False)
class _Route:
    """One shared stream as the router follows it: the latest objects of each run (what a
    wait joining late starts from) and the waits of each run."""

    spec: StreamSpec
    lock: threading.Lock = field(default_factory=threading.Lock)
    objects: dict[RunKey, dict[str, Obj]] = field(default_factory=lambda: defaultdict(dict))
    waits: dict[RunKey, list[RoutedHub]] = field(default_factory=lambda: defaultdict(list))
    joined: dict[RoutedHub, None] = field(default_factory=dict)  # in the order they joined
    error: Event | None = None
    informer: Informer | None = None  # set once subscribed
    listed: bool = False  # the stream's first list went to the waits joined by then

    def announce(self) -> None:
        """The stream listed: tell each wait joined (after the listed objects of its runs,
        before any later event), each through its own queue."""
        with self.lock:
            self.listed = True
            for hub in self.joined:
                hub.put(Event(self.spec.resource.kind, LISTED, {}))

    def deliver(self, event: Event) -> None:
        with self.lock:
            if event.type == "ERROR":
                self.error = event
                for hub in self.joined:
                    hub.put(event)
                return
            meta = event.obj.get("metadata") or {}
            key = str(meta.get("uid") or meta.get("name") or "")
            for run in run_of(event):
                if event.type == "DELETED":
                    self.objects[run].pop(key, None)
                    if not self.objects[run]:
                        del self.objects[run]
                else:
                    self.objects[run][key] = event.obj
                for hub in self.waits.get(run, ()):
                    hub.put(event)


class RunRouter:
    """The shared streams of one service, routed by run.

    Example:
        >>> router = RunRouter(streams)  # doctest: +SKIP
        >>> with RoutedHub(router, specs, {("ml", "ft")}) as hub:  # doctest: +SKIP
        ...     event = hub.next(timeout=1.0)
    """

    def __init__(self, streams: SharedStreams) -> None:
        self.streams = streams
        self._lock = threading.Lock()
        self._routes: dict[StreamSpec, _Route] = {}

    def join(self, spec: StreamSpec, hub: RoutedHub) -> _Route:
        """Route the events of `hub`'s runs on `spec` to it, starting with their objects
        the stream shows now; the objects of `spec.known` found gone come as DELETED."""
        with self._lock:
            route = self._routes.get(spec)
            if route is None or route.error is not None:
                route = self._routes[spec] = _Route(spec)
                bare = StreamSpec(spec.resource, spec.namespace, spec.label_selector)
                try:
                    route.informer = self.streams.subscribe(bare, route.deliver)
                except BaseException:
                    del self._routes[spec]
                    raise
                route.informer.when_listed(route.announce)
            with route.lock:
                route.joined[hub] = None
                hub.unlisted += not route.listed
                if route.error is not None:
                    hub.put(route.error)
                for run in hub.runs:
                    route.waits[run].append(hub)
                    for obj in route.objects.get(run, {}).values():
                        hub.put(Event(spec.resource.kind, "SYNCED", obj))
        informer = route.informer
        assert informer is not None  # subscribed before the route was shared
        try:
            informer.check_gone(hub.put, informer.expect(spec.known))
        except BaseException:
            self.leave(route, hub)
            raise
        return route

    def leave(self, route: _Route, hub: RoutedHub) -> None:
        """Stop routing to `hub`; the last wait to leave a stream unsubscribes from it."""
        with self._lock:
            with route.lock:
                route.joined.pop(hub, None)
                for run in hub.runs:
                    waits = route.waits.get(run, [])
                    if hub in waits:
                        waits.remove(hub)
                    if not waits:
                        route.waits.pop(run, None)
                last = not route.joined
            if last and self._routes.get(route.spec) is route:
                del self._routes[route.spec]
        if last and route.informer is not None:
            self.streams.unsubscribe(route.informer, route.deliver)

    @property
    def open(self) -> int:
        """Streams the router follows now."""
        with self._lock:
            return len(self._routes)


class RoutedHub(EventQueue):
    """One wait's view of the routed streams: the events of its runs only, in one queue.

    Example:
        >>> with RoutedHub(router, specs, {("ml", "ft")}) as hub:  # doctest: +SKIP
        ...     event = hub.next(timeout=1.0)
    """

    def __init__(self, router: RunRouter, specs: list[StreamSpec], runs: set[RunKey]) -> None:
        super().__init__()
        self.router, self.specs, self.runs = router, specs, frozenset(runs)
        self._routes: list[_Route] = []
        self.unlisted = 0  # streams joined that have not listed yet

    def __enter__(self) -> RoutedHub:
        try:
            for spec in self.specs:
                self._routes.append(self.router.join(spec, self))
        except BaseException:
            self.__exit__()
            raise
        return self

    @property
    def listed(self) -> bool:
        """True once every stream of this wait listed, and so handed over the objects its
        runs had then (what `next` returned before)."""
        return self.unlisted == 0

    def next(self, timeout: float) -> Event | None:
        """The next event; None after `timeout` seconds without one, or at once when the
        last of this wait's streams to list just did (its waiter acts on what it has)."""
        end = time.monotonic() + timeout
        while True:
            event = super().next(max(0.0, end - time.monotonic()))
            if event is None or event.type != LISTED:
                return event
            self.unlisted -= 1
            if self.listed:
                return None

    def objects(self, run: RunKey) -> list[Event]:
        """The objects of `run` every stream of this wait shows now, as SYNCED events: what a
        follower that just learnt of a new attempt feeds its tracker, so the attempt's
        Workload or pods that came before its job (another stream) are not missed."""
        found = []
        for route in self._routes:
            with route.lock:
                objs = list(route.objects.get(run, {}).values())
            found += [Event(route.spec.resource.kind, "SYNCED", obj) for obj in objs]
        return found

    def __exit__(self, *exc: object) -> None:
        joined, self._routes = self._routes, []
        for route in joined:
            self.router.leave(route, self)
