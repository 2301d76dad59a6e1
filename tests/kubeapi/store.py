"""Thread-safe object store with one global resourceVersion counter and a watch event window."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .deletion import GarbageCollector
from .managed import Entry
from .objects import comparable, json_copy, meta, new_uid, now_rfc3339, spec_changed
from .patches import merge_patch
from .resources import Registry, ResourceType
from .selectors import parse_label_selector

ObjKey = tuple[str, str, str]  # (resource key, namespace or "", name)


@dataclass(frozen=True)
class WatchEvent:
    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    key: str
    namespace: str
    obj: dict[str, Any]
    old: dict[str, Any] | None


class Store:
    """Objects are stored as immutable dicts: every write stores a fresh dict, never mutates."""

    def __init__(
        self,
        registry: Registry,
        history_size: int = 1000,
        foreground_delete_seconds: float | None = 0.2,
    ) -> None:
        self.registry = registry
        self.gc = GarbageCollector(self, foreground_delete_seconds)
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self._rv = 0
        self._objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        self._managed: dict[ObjKey, list[Entry]] = {}
        self._history: deque[WatchEvent] = deque()
        self.history_size = history_size
        self.compacted_rv = 0
        self.closed = False

    # ---- low level, shared with the HTTP semantics layer -------------------------------
    @property
    def resource_version(self) -> int:
        return self._rv

    def lookup(self, key: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            return self._objects.get(key, {}).get((namespace, name))

    def items(self, key: str, namespace: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            bucket = self._objects.get(key, {})
            keys = sorted(k for k in bucket if namespace is None or k[0] == namespace)
            return [bucket[k] for k in keys]

    def all_items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        with self.lock:
            snapshot = [(key, obj) for key, b in self._objects.items() for obj in b.values()]
        yield from snapshot

    def managed(self, key: str, namespace: str, name: str) -> list[Entry]:
        with self.lock:
            return list(self._managed.get((key, namespace, name), []))

    def commit(
        self,
        rt: ResourceType,
        obj: dict[str, Any],
        deleting: bool = False,
        managed: list[Entry] | None = None,
        policy: str = "Background",
    ) -> dict[str, Any]:
        """Store `obj` (caller hands over ownership) or delete it; bump rv; record the event."""
        with self.lock:
            m = meta(obj)
            ns = m.get("namespace", "") if rt.namespaced else ""
            name = m["name"]
            bucket = self._objects.setdefault(rt.key, {})
            old = bucket.get((ns, name))
            if not deleting and m.get("deletionTimestamp") and not m.get("finalizers"):
                deleting = True  # last finalizer removed: the object goes away now
            self._rv += 1
            m["resourceVersion"] = str(self._rv)
            okey = (rt.key, ns, name)
            if managed is not None:
                if managed:
                    self._managed[okey] = managed
                else:
                    self._managed.pop(okey, None)
            entries = self._managed.get(okey)
            if entries:
                m["managedFields"] = [e.render() for e in entries]
            if deleting:
                bucket.pop((ns, name), None)
                self._managed.pop(okey, None)
                etype = "DELETED"
            else:
                bucket[(ns, name)] = obj
                etype = "ADDED" if old is None else "MODIFIED"
            self._record(WatchEvent(self._rv, etype, rt.key, ns, obj, old))
            if deleting:
                self.gc.cascade(rt, obj, policy)
            return obj

    def delete_object(
        self, rt: ResourceType, obj: dict[str, Any], policy: str = "Background"
    ) -> dict[str, Any] | None:
        """Delete now, or only mark for deletion while finalizers remain (returns the mark)."""
        return self.gc.delete(rt, obj, policy)

    def _record(self, event: WatchEvent) -> None:
        self._history.append(event)
        while len(self._history) > self.history_size:
            self.compacted_rv = self._history.popleft().rv
        self.changed.notify_all()

    def events_after(self, rv: int) -> tuple[list[WatchEvent] | None, int]:
        """Events newer than `rv` and the current rv; None if `rv` fell out of the window."""
        with self.lock:
            if rv < self.compacted_rv:
                return None, self._rv
            return [e for e in self._history if e.rv > rv], self._rv

    def wait(self, rv: int, timeout: float) -> None:
        with self.changed:
            if self._rv <= rv and not self.closed:
                self.changed.wait(timeout)

    def kick(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def compact(self) -> int:
        """Forget the whole event history, as an etcd compaction would; returns the rv."""
        with self.lock:
            self._history.clear()
            self.compacted_rv = self._rv
            return self._rv

    def close(self) -> None:
        self.gc.close()
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    # ---- helpers for tests that play a controller (no validation, no authorization) ----
    def resolve(self, resource: str | ResourceType) -> ResourceType:
        return resource if isinstance(resource, ResourceType) else self.registry.resolve(resource)

    def get(self, resource: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        rt = self.resolve(resource)
        obj = self.lookup(rt.key, (namespace or "") if rt.namespaced else "", name)
        return None if obj is None else json_copy(obj)

    def list(
        self, resource: str, namespace: str | None = None, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
        rt = self.resolve(resource)
        match = parse_label_selector(label_selector)
        return [json_copy(o) for o in self.items(rt.key, namespace) if match(o)]

    def _resolve_obj(self, obj: dict[str, Any]) -> ResourceType:
        group = obj.get("apiVersion", "").rpartition("/")[0]
        hits = [
            rt for rt in self.registry.all() if rt.kind == obj.get("kind") and rt.group == group
        ]
        if not hits:
            raise KeyError(f"no resource for {obj.get('apiVersion')}/{obj.get('kind')}")
        return hits[0]

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or fully replace (status included) an object; returns the stored copy."""
        rt = self._resolve_obj(obj)
        new = json_copy(obj)
        m = meta(new)
        with self.lock:
            old = self.lookup(rt.key, m.get("namespace", "") if rt.namespaced else "", m["name"])
            if old is None:
                m.setdefault("uid", new_uid())
                m.setdefault("creationTimestamp", now_rfc3339())
                m["generation"] = 1
            else:
                om = old["metadata"]
                m["uid"], m["creationTimestamp"] = om.get("uid"), om.get("creationTimestamp")
                if om.get("deletionTimestamp"):
                    m["deletionTimestamp"] = om["deletionTimestamp"]
                m["generation"] = om.get("generation", 1) + int(spec_changed(old, new))
                if comparable(old) == comparable(new):
                    return json_copy(old)
            return json_copy(self.commit(rt, new))

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        rt = self._resolve_obj(obj)
        m = obj.get("metadata") or {}
        with self.lock:
            if self.lookup(rt.key, m.get("namespace", "") if rt.namespaced else "", m["name"]):
                raise KeyError(f"{rt.key} {m.get('namespace')}/{m['name']} already exists")
            return self.put(obj)

    def update_status(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        status: dict[str, Any],
        merge: bool = False,
    ) -> dict[str, Any]:
        """Replace (or JSON-merge into) `.status`, like a controller's status write."""
        with self.lock:
            current = self.get(resource, namespace, name)
            if current is None:
                raise KeyError(f"{resource} {namespace}/{name} not found")
            current["status"] = (
                merge_patch(current.get("status") or {}, status) if merge else json_copy(status)
            )
            return self.put(current)

    def patch(
        self, resource: str, namespace: str | None, name: str, patch: dict[str, Any]
    ) -> dict[str, Any]:
        """JSON merge patch of the whole object (spec, metadata and status alike)."""
        with self.lock:
            current = self.get(resource, namespace, name)
            if current is None:
                raise KeyError(f"{resource} {namespace}/{name} not found")
            return self.put(merge_patch(current, patch))

    def delete(self, resource: str, namespace: str | None, name: str) -> bool:
        """Remove immediately (finalizers ignored); True if it existed."""
        rt = self.resolve(resource)
        with self.lock:
            obj = self.lookup(rt.key, (namespace or "") if rt.namespaced else "", name)
            if obj is None:
                return False
            self.commit(rt, json_copy(obj), deleting=True)
            return True
