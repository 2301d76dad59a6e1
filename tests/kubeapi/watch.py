"""Watch streams: initial state, resume by resourceVersion, 410 Expired, bookmarks, cuts."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from . import errors
from .calls import Call
from .objects import parse_bool, view
from .partial_metadata import negotiate, partial_object
from .store import Store, WatchEvent

CUT = {"type": "__CUT__"}  # sentinel: the handler drops the connection without ending the stream
POLL = 0.25  # upper bound on how long a watch sleeps before re-checking stop/cut flags


@dataclass
class WatchOptions:
    bookmark_interval: float
    max_seconds: float | None
    should_stop: Callable[[], bool]
    should_cut: Callable[[], bool]
    cut_after: int | None = None  # fault injection: cut after this many events
    client_alive: Callable[[], bool] = lambda: True  # set by the handler


class WatchStream:
    def __init__(
        self, store: Store, call: Call, match: Callable[[dict[str, Any]], bool], opts: WatchOptions
    ) -> None:
        self.store, self.call, self.match, self.opts = store, call, match, opts
        start = call.q("resourceVersion") or ""
        self.send_initial = parse_bool(call.q("sendInitialEvents"))
        self.bookmarks = parse_bool(call.q("allowWatchBookmarks"))
        if start not in ("", "0") and not start.isdigit():
            raise errors.bad_request(f'invalid resource version "{start}"')
        self.start = start
        timeout = call.q("timeoutSeconds")
        limit = float(timeout) if timeout else None
        if opts.max_seconds is not None:
            limit = opts.max_seconds if limit is None else min(limit, opts.max_seconds)
        self.deadline = None if limit is None else time.monotonic() + limit
        self.sent = 0
        # A metadata-only watch (client-go's metadata informers) sends each event's object as
        # PartialObjectMetadata.
        self.target = negotiate(call.accept)

    def _obj(self, obj: dict[str, Any]) -> dict[str, Any]:
        if self.target is not None:
            return dict(partial_object(obj, self.target, self.call.rt))
        return view(obj, self.call.rt, self.call.version)

    def _bookmark(self, rv: int, initial_end: bool = False) -> dict[str, Any]:
        m: dict[str, Any] = {"resourceVersion": str(rv), "creationTimestamp": None}
        if initial_end:
            m["annotations"] = {"k8s.io/initial-events-end": "true"}
        rt = self.call.rt
        obj = {"kind": rt.kind, "apiVersion": rt.api_version(self.call.version), "metadata": m}
        return {"type": "BOOKMARK", "object": obj}

    def _expired(self, rv: int) -> dict[str, Any]:
        err = errors.expired(f"too old resource version: {rv} ({self.store.compacted_rv + 1})")
        return {"type": "ERROR", "object": err.status()}

    def _translate(self, e: WatchEvent) -> str | None:
        # With selectors the real server turns "stopped matching" into DELETED and
        # "started matching" into ADDED.
        if e.key != self.call.rt.key or (
            self.call.namespace and e.namespace != self.call.namespace
        ):
            return None
        if e.type == "DELETED":
            return "DELETED" if self.match(e.obj) else None
        now_match = self.match(e.obj)
        was_match = e.old is not None and self.match(e.old)
        if now_match:
            return "MODIFIED" if was_match else "ADDED"
        return "DELETED" if was_match else None

    def _emit(self, event: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield event
        self.sent += 1
        if self.opts.cut_after is not None and self.sent >= self.opts.cut_after:
            yield CUT

    def events(self) -> Iterator[dict[str, Any]]:
        if self.opts.cut_after == 0:
            yield CUT
            return
        if self.start in ("", "0") or self.send_initial:
            with self.store.lock:
                pos = self.store.resource_version
                initial = [
                    o
                    for o in self.store.items(self.call.rt.key, self.call.namespace or None)
                    if self.match(o)
                ]
            for obj in initial:
                yield from self._emit({"type": "ADDED", "object": self._obj(obj)})
            if self.send_initial and self.bookmarks:
                yield self._bookmark(pos, initial_end=True)
        else:
            pos = int(self.start)
        last_bookmark = time.monotonic()
        while True:
            if self.opts.should_stop() or not self.opts.client_alive():
                return
            if self.opts.should_cut():
                yield CUT
                return
            events, current = self.store.events_after(pos)
            if events is None:
                yield self._expired(pos)
                return
            for e in events:
                etype = self._translate(e)
                if etype is not None:
                    yield from self._emit({"type": etype, "object": self._obj(e.obj)})
            pos = max(pos, current)
            now = time.monotonic()
            if self.deadline is not None and now >= self.deadline:
                return
            if self.bookmarks and now - last_bookmark >= self.opts.bookmark_interval:
                yield self._bookmark(pos)
                last_bookmark = now
            wait = POLL
            if self.deadline is not None:
                wait = min(wait, self.deadline - now)
            if self.bookmarks:
                wait = min(wait, self.opts.bookmark_interval - (now - last_bookmark))
            self.store.wait(pos, max(wait, 0.0))
