"""Server-side apply of a model server's objects: the shared ones created when missing, the
service's own never applied over something another service or tool owns."""

from __future__ import annotations

import time
from typing import Protocol

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource_of
from gkeml_sdk.backends.kubernetes.api.shared_apply import ensure_shared, split_shared
from gkeml_sdk.backends.kubernetes.api.streams import SharedStreams
from gkeml_sdk.backends.kubernetes.runs.attempts import Attempts
from gkeml_sdk.backends.kubernetes.runs.liveness import ControllerWatch
from gkeml_sdk.backends.kubernetes.setup.preflight import Preflight
from gkeml_sdk.core.objects import Obj, labels, uid
from gkeml_sdk.errors import ClusterError
from gkeml_sdk.serving.catalog import SERVE_LABEL


class ServingCluster(Protocol):
    """What serving reads and writes through (a `KubernetesBackend`)."""

    namespace: str
    kube: KubeClient
    streams: SharedStreams
    attempts: Attempts
    preflight: Preflight

    @property
    def controller(self) -> ControllerWatch: ...


def apply_owned(backend: ServingCluster, objects: list[Obj], name: str) -> None:
    """Server-side apply `objects` of service `name`, in order, after creating the shared
    ones that are missing (`shared_apply`). An object of that name that
    belongs to something else is never applied over (`ClusterError`); one still being
    deleted (a service deleted and served again) is waited out, or the apply would land on
    it and vanish with it."""
    end = time.monotonic() + backend.attempts.deletion_timeout
    shared, owned = split_shared(objects)
    ensure_shared(backend.kube, shared)  # the weights' volume: created when missing, not owned
    for obj in owned:
        res, meta = resource_of(obj), obj["metadata"]
        current = backend.kube.find(res, meta["name"], meta.get("namespace"))
        if current is not None:
            refuse_foreign(obj, current, name)
            if (current.get("metadata") or {}).get("deletionTimestamp"):
                backend.attempts.wait_gone(res, meta["name"], meta["namespace"], uid(current), end)
        backend.kube.apply(obj)


def refuse_foreign(obj: Obj, current: Obj, name: str) -> None:
    """`ClusterError` when `current`, the object of `obj`'s name as read, is not service
    `name`'s own: gkeml never applies over what it did not make for that service."""
    owner = labels(current).get(SERVE_LABEL)
    if owner == name:
        return
    whose = f"gkeml service {owner!r}" if owner else "something other than gkeml"
    kind, named = obj["kind"], obj["metadata"]["name"]
    raise ClusterError(
        f"apply {kind} {named}",
        status=409,
        reason="AlreadyExists",
        message=f"a {kind} named {named!r} already exists and belongs to {whose}",
        hint="gkeml never changes objects it did not make for this service; "
        "choose another name, or delete that object first",
    )
