"""Every write of the standby manager, conditional on what it read, so that a manager that
lost its Lease while a write was on its way changes nothing:

- routes and the status ConfigMap are read, then updated with that resourceVersion (a 409
  Conflict means someone else wrote: read again, check the Lease again);
- standby counts are merge patches carrying the resourceVersion of the Deployment as read;
- missing Deployments are created, which is conditional by nature (409 AlreadyExists);
- Events are named after the failover they report, so one report from two leaders is one
  object;
- what cannot carry a precondition, an engine's `/sleep` and `/wake_up` through `pods/proxy`,
  is repaired level-triggered: each resync asks every warm standby `/is_sleeping` again
  (`standby.failover`), so a late `/sleep` of a replaced leader is undone within one resync.

Right before each write, `check()` asks the elector whether we still lead (`LeaseLost`
otherwise; a local check of our last renewal against the renew deadline, no request). Routes and
the status carry the leadership's term (`leaseTransitions`): a new leader's first write of each
changes its resourceVersion, so a request of the old leader still in flight fails."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from gkeml_sdk.backends.kubernetes.api.kube import FIELD_MANAGER, KubeClient
from gkeml_sdk.backends.kubernetes.api.lease import LeaderElector, LeaseLost
from gkeml_sdk.backends.kubernetes.api.resources import Resource, resource_of
from gkeml_sdk.core.objects import Obj

log = logging.getLogger(__name__)
TERM_ANNOTATION = "gkeml.dev/leader-term"
# Conflicts in a row before a write is left to the next pass (someone else keeps writing).
MAX_CONFLICTS = 5
# Called with (write point, namespace) after the Lease check, right before the request goes
# out: "route", "status", "create", "replicas", "sleep", "wake", "event".
WriteHook = Callable[[str, str], None]


class FencedWrites:
    """The manager's writes, each conditional on what it read and sent only while leading.

    Example:
        >>> writes = FencedWrites(kube, elector)  # doctest: +SKIP
        >>> writes.put(router(tenant))  # doctest: +SKIP
        True
    """

    def __init__(
        self, kube: KubeClient, elector: LeaderElector, before_write: WriteHook | None = None
    ) -> None:
        self.kube, self.elector, self.before_write = kube, elector, before_write
        # What we patched, by (kind, namespace, name): (resourceVersion we patched, answer).
        # Until the watch shows a newer version, a cache still holding the old one is stale.
        self._patched: dict[tuple[str, str, str], tuple[str, Obj]] = {}

    def newest(self, kind: str, cache: dict[tuple[str, str], Obj]) -> dict[tuple[str, str], Obj]:
        """`cache` (a copy of a watch cache of `kind`) with our own patches the watch has not
        delivered yet put in, so a pass never acts on what it already changed."""
        for (k, ns, name), (old_rv, answer) in list(self._patched.items()):
            seen = cache.get((ns, name))
            if k != kind or seen is None:
                continue
            if seen["metadata"].get("resourceVersion") == old_rv:
                cache[(ns, name)] = answer
            else:
                self._patched.pop((k, ns, name), None)
        return cache

    def check(self, point: str, namespace: str) -> None:
        """Raise `LeaseLost` unless we lead; called right before each write is sent."""
        self.elector.fence()
        if self.before_write is not None:
            self.before_write(point, namespace)

    def put(self, desired: Obj, point: str = "route") -> bool:
        """Make the object's spec (or data) what `desired` says, stamped with our term: read
        it, PUT with that resourceVersion, or create it when absent. True when something was
        written."""
        res = resource_of(desired)
        meta = desired["metadata"]
        for _ in range(MAX_CONFLICTS):
            current = self.kube.find(res, meta["name"], meta.get("namespace"))
            body = self._stamped(desired, current)
            if current is not None and _same(current, body):
                return False
            self.check(point, str(meta.get("namespace", "")))
            if self.kube.write_over(body, current) is not None:
                return True
            log.info("%s %s changed while we wrote it: reading it again", res.kind, meta["name"])
        return False

    def create(self, obj: Obj) -> bool:
        """Create `obj` unless it exists (a create is conditional by nature). True if created."""
        self.check("create", str(obj["metadata"].get("namespace", "")))
        return self.kube.create(obj) is not None

    def patch(
        self,
        res: Resource,
        name: str,
        namespace: str,
        patch: Obj,
        seen: Obj | None,
        point: str = "replicas",
    ) -> None:
        """Merge-patch `patch` onto the object as `seen` (its resourceVersion is the
        precondition); on a conflict read it again and patch that."""
        for _ in range(MAX_CONFLICTS):
            current = seen if seen is not None else self.kube.get(res, name, namespace)
            rv = current["metadata"]["resourceVersion"]
            body = {**patch, "metadata": {**patch.get("metadata", {}), "resourceVersion": rv}}
            self.check(point, namespace)
            answer = self.kube.transport.call(
                "PATCH",
                res.path(namespace, name),
                action=f"patch {res.kind} {name}",
                query=[("fieldManager", FIELD_MANAGER)],
                body=body,
                content_type="application/merge-patch+json",
                ok_statuses=frozenset({409}),
            )
            if answer:
                self._patched[(res.kind, namespace, name)] = (rv, dict(answer))
                return
            seen = None

    def post(
        self, path: str, namespace: str, *, point: str, action: str, query: list[tuple[str, str]]
    ) -> None:
        """A POST to a pod's server through `pods/proxy`: no object to precondition, so
        what it changes is checked again on every resync."""
        self.check(point, namespace)
        self.kube.post(path, action=action, query=query)

    def read(self, path: str, *, action: str) -> Any:
        """A GET of a pod's server through `pods/proxy` (a read: no Lease check)."""
        return self.kube.raw(path, action=action)

    def _stamped(self, desired: Obj, current: Obj | None) -> Obj:
        meta = {k: v for k, v in desired["metadata"].items() if k != "resourceVersion"}
        annotations = {**(meta.get("annotations") or {}), TERM_ANNOTATION: str(self.elector.term)}
        body = {**desired, "metadata": {**meta, "annotations": annotations}}
        if current is not None:  # keep what others (kubectl, Istio) annotated
            kept = (current.get("metadata") or {}).get("annotations") or {}
            body["metadata"]["annotations"] = {**kept, **annotations}
        return body


def _same(current: Obj, body: Obj) -> bool:
    """True when `current` already holds `body`'s content and term."""
    content = [k for k in body if k not in ("apiVersion", "kind", "metadata", "status")]
    mine = (body["metadata"].get("annotations") or {}).get(TERM_ANNOTATION)
    theirs = ((current.get("metadata") or {}).get("annotations") or {}).get(TERM_ANNOTATION)
    return mine == theirs and all(current.get(k) == body[k] for k in content)


__all__ = ["TERM_ANNOTATION", "FencedWrites", "LeaseLost", "WriteHook"]
