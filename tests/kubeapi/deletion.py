"""Deletion as kube-apiserver + garbage collector do it: finalizers, Foreground deletion that
keeps the owner visible until its blocking dependents are gone, Background and Orphan."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .objects import json_copy, now_rfc3339

if TYPE_CHECKING:
    from .resources import ResourceType
    from .store import Store

FOREGROUND = "foregroundDeletion"
POLL = 0.02  # how often a foreground-deleting owner re-checks its blocking dependents


class GarbageCollector:
    """Marks, cascades and finishes deletions for a `Store` (its lock guards everything).

    `delay` is how long a Foreground deletion stays visible at least (the real one lasts as
    long as the pods take to terminate); None holds it until `finish()` is called."""

    def __init__(self, store: Store, delay: float | None) -> None:
        self.store = store
        self.delay = delay
        self._timers: set[threading.Timer] = set()
        self._held: list[tuple[str, str, str, str]] = []

    def delete(self, rt: ResourceType, obj: dict[str, Any], policy: str) -> dict[str, Any] | None:
        """Delete now, or only mark for deletion (returns the marked object)."""
        store = self.store
        with store.lock:
            m = obj["metadata"]
            if m.get("deletionTimestamp"):
                return obj  # already terminating: a second DELETE changes nothing
            if policy != "Foreground" and not m.get("finalizers"):
                store.commit(rt, json_copy(obj), deleting=True, policy=policy)
                return None
            marked = json_copy(obj)
            mm = marked["metadata"]
            mm["deletionTimestamp"] = now_rfc3339()
            mm["deletionGracePeriodSeconds"] = 0
            if policy == "Foreground":
                mm["finalizers"] = [*(mm.get("finalizers") or []), FOREGROUND]
            stored = store.commit(rt, marked)
            if policy == "Foreground":
                self.cascade(rt, stored, "Foreground")
                self._schedule(rt, stored, self.delay)
            return stored

    def cascade(self, rt: ResourceType, obj: dict[str, Any], policy: str) -> None:
        """Namespace contents go with the namespace; dependents per propagation policy (the
        real garbage collector is asynchronous; here Background/Orphan act at once and
        Foreground propagates, so owners wait for their dependents' own finalizers)."""
        store = self.store
        m = obj["metadata"]
        for key, child in list(store.all_items()):
            cm = child["metadata"]
            child_rt = store.registry.by_key(key)
            if child_rt is None:
                continue
            if rt.key == "namespaces" and cm.get("namespace") == m["name"]:
                store.commit(child_rt, json_copy(child), deleting=True)
                continue
            refs = cm.get("ownerReferences") or []
            if not m.get("uid") or not any(r.get("uid") == m["uid"] for r in refs):
                continue
            if policy == "Orphan":
                updated = json_copy(child)
                updated["metadata"]["ownerReferences"] = [
                    r for r in refs if r.get("uid") != m["uid"]
                ]
                store.commit(child_rt, updated)
            else:
                self.delete(child_rt, child, policy)

    def blocking_dependents(self, uid: str) -> list[dict[str, Any]]:
        """Objects whose ownerReference to `uid` has blockOwnerDeletion: true."""
        return [
            child
            for _, child in self.store.all_items()
            if any(
                r.get("uid") == uid and r.get("blockOwnerDeletion")
                for r in child["metadata"].get("ownerReferences") or []
            )
        ]

    def _schedule(self, rt: ResourceType, obj: dict[str, Any], delay: float | None) -> None:
        m = obj["metadata"]
        ident = (rt.key, m.get("namespace", "") if rt.namespaced else "", m["name"], m["uid"])
        if delay is None:
            self._held.append(ident)
            return
        timer = threading.Timer(delay, self._finish_one, ident)
        timer.daemon = True
        self._timers.add(timer)
        timer.start()

    def _finish_one(self, key: str, ns: str, name: str, uid: str, force: bool = False) -> None:
        store = self.store
        with store.lock:
            self._timers = {t for t in self._timers if t.is_alive()}
            rt = store.registry.by_key(key)
            obj = store.lookup(key, ns, name)
            if store.closed or rt is None or obj is None or obj["metadata"].get("uid") != uid:
                return
            fins = obj["metadata"].get("finalizers") or []
            if FOREGROUND not in fins:
                return
            blocking = self.blocking_dependents(uid)
            if blocking:
                if not force:
                    # The real GC deletes dependents that appeared after the cascade too
                    # (processDeletingDependentsItem), so they cannot hold the owner forever.
                    for key, child in list(store.all_items()):
                        child_rt = store.registry.by_key(key)
                        if child_rt is not None and any(child is b for b in blocking):
                            self.delete(child_rt, child, "Foreground")
                    self._schedule(rt, obj, POLL)
                    return
                self._held.append((key, ns, name, uid))
                return
            updated = json_copy(obj)
            updated["metadata"]["finalizers"] = [f for f in fins if f != FOREGROUND]
            store.commit(rt, updated)

    def finish(self) -> None:
        """Complete every held Foreground deletion whose dependents are gone (dependents first,
        so an owner whose children were only held by this waits no longer)."""
        with self.store.lock:
            for _ in range(8):  # owner chains are short: JobSet -> Job -> Pod
                held, self._held = self._held, []
                for ident in held:
                    self._finish_one(*ident, force=True)
                if len(self._held) == len(held):
                    break

    def close(self) -> None:
        for timer in list(self._timers):
            timer.cancel()
