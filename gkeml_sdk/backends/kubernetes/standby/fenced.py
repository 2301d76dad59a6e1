"""Every write of the standby manager, fenced by its Lease: `LeaderElector.fence()` first
(`LeaseLost` unless our last renewal is within the renew deadline; no request), then the
write carries the resourceVersion of the object read after that fence, so a write prepared
by a leader that has since been replaced is a 409 Conflict; on a conflict we fence and read
again. Routes and the status carry the leadership's term (`leaseTransitions`): a new
leader's first write of each changes its resourceVersion, so even a request of the old leader
still in flight fails."""

from __future__ import annotations

import logging

from gkeml_sdk.backends.kubernetes.kube import FIELD_MANAGER, KubeClient
from gkeml_sdk.backends.kubernetes.lease import LeaderElector, LeaseLost
from gkeml_sdk.backends.kubernetes.resources import Resource, resource_of
from gkeml_sdk.core.objects import Obj

log = logging.getLogger(__name__)
TERM_ANNOTATION = "gkeml.dev/leader-term"
# Conflicts in a row before a write is left to the next pass (someone else keeps writing).
MAX_CONFLICTS = 5


class FencedWrites:
    """The manager's writes, each after a fence check.

    Example:
        >>> writes = FencedWrites(kube, elector)  # doctest: +SKIP
        >>> writes.put(router(tenant))  # doctest: +SKIP
        True
    """

    def __init__(self, kube: KubeClient, elector: LeaderElector) -> None:
        self.kube, self.elector = kube, elector
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

    def fence(self) -> str:
        """The Lease's resourceVersion while we hold it; `LeaseLost` otherwise."""
        return self.elector.fence()

    def put(self, desired: Obj) -> bool:
        """Make the object's spec (or data) what `desired` says, stamped with our term: read
        it under the Lease, PUT with that resourceVersion, or create it when absent. True
        when something was written."""
        res = resource_of(desired)
        meta = desired["metadata"]
        for _ in range(MAX_CONFLICTS):
            self.fence()
            current = self.kube.find(res, meta["name"], meta.get("namespace"))
            body = self._stamped(desired, current)
            if current is not None and _same(current, body):
                return False
            if self.kube.write_over(body, current) is not None:
                return True
            log.info("%s %s changed while we wrote it: reading it again", res.kind, meta["name"])
        return False

    def create(self, obj: Obj) -> bool:
        """Create `obj` unless it exists (a create is conditional by nature). True if created."""
        self.fence()
        return self.kube.create(obj) is not None

    def patch(self, res: Resource, name: str, namespace: str, patch: Obj, seen: Obj | None) -> None:
        """Merge-patch `patch` onto the object as `seen` (its resourceVersion is the
        precondition); on a conflict read it again and patch that."""
        for _ in range(MAX_CONFLICTS):
            self.fence()
            current = seen if seen is not None else self.kube.get(res, name, namespace)
            rv = current["metadata"]["resourceVersion"]
            body = {**patch, "metadata": {**patch.get("metadata", {}), "resourceVersion": rv}}
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

    def post(self, path: str, *, action: str, query: list[tuple[str, str]]) -> None:
        """A POST to a pod's server through `pods/proxy` (no object to precondition)."""
        self.fence()
        self.kube.post(path, action=action, query=query)

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


__all__ = ["TERM_ANNOTATION", "FencedWrites", "LeaseLost"]
