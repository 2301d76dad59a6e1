"""Typed verbs over the Kubernetes REST API: server-side apply with one field manager, get,
list, delete (with preconditions), watch streams and pod logs. A `guard` set on the client
is asked right before every write it sends (a leader's check that it still leads)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from gkeml_sdk.backends.kubernetes.api.resources import Resource, resource_of
from gkeml_sdk.backends.kubernetes.api.transport import TransientError, Transport
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError

FIELD_MANAGER = "gkeml"
LIST_PAGE = 500  # objects a list reads at a time (kubectl's and client-go's pager default)


class WatchExpired(Exception):
    """The resourceVersion a watch resumed from is too old (410 Gone): list again."""


class KubeClient:
    """The verbs the SDK needs, for built-in and custom kinds alike.

    Example:
        >>> kube = KubeClient(Transport(api_client))  # doctest: +SKIP
        >>> kube.apply({"apiVersion": "v1", "kind": "ConfigMap", ...})  # doctest: +SKIP
    """

    def __init__(self, transport: Transport, guard: Callable[[str], None] | None = None) -> None:
        self.transport = transport
        # Called with the write's action right before it is sent; raises to stop it.
        self.guard = guard

    def _write(self, action: str) -> str:
        if self.guard is not None:
            self.guard(action)
        return action

    def apply(self, obj: Obj, *, force: bool = True) -> Obj:
        """Server-side apply: creates or updates `obj`, idempotently, as field manager gkeml."""
        res = resource_of(obj)
        meta = obj["metadata"]
        return dict(
            self.transport.call(
                "PATCH",
                res.path(meta.get("namespace"), meta["name"]),
                action=self._write(f"apply {obj['kind']} {meta['name']}"),
                query=[("fieldManager", FIELD_MANAGER), ("force", "true" if force else "false")],
                body=obj,
                content_type="application/apply-patch+yaml",
            )
        )

    def create(self, obj: Obj) -> Obj | None:
        """Create `obj` (POST); None when an object of that name already exists. Objects
        Kueue manages are created, never applied: a re-apply would own fields Kueue takes
        over at admission (`spec.suspend`) and conflict with it, or, forced, suspend a
        running job."""
        res = resource_of(obj)
        meta = obj["metadata"]
        created = self.transport.call(
            "POST",
            res.path(meta.get("namespace")),
            action=self._write(f"create {obj['kind']} {meta['name']}"),
            query=[("fieldManager", FIELD_MANAGER)],
            body=obj,
            ok_statuses=frozenset({409}),
        )
        return dict(created) if created else None

    def replace(self, obj: Obj) -> Obj | None:
        """Update (PUT) `obj` as read, with its resourceVersion; None when it changed since
        (409 Conflict), so the caller reads it again. Leases and counters need this."""
        res = resource_of(obj)
        meta = obj["metadata"]
        updated = self.transport.call(
            "PUT",
            res.path(meta.get("namespace"), meta["name"]),
            action=self._write(f"update {obj['kind']} {meta['name']}"),
            query=[("fieldManager", FIELD_MANAGER)],
            body=obj,
            ok_statuses=frozenset({409}),
        )
        return dict(updated) if updated else None

    def write_over(self, body: Obj, current: Obj | None) -> Obj | None:
        """Create `body` when `current` (the object as read) is None, else replace it
        conditionally on `current`'s resourceVersion; None when someone else wrote first."""
        if current is None:
            return self.create(body)
        meta = {**body["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}
        return self.replace({**body, "metadata": meta})

    def patch(
        self, res: Resource, name: str, namespace: str | None, patch: Obj, *, sub: str = ""
    ) -> Obj:
        """JSON merge patch of one object (or of its `sub`resource, e.g. status)."""
        return dict(
            self.transport.call(
                "PATCH",
                res.path(namespace, name, sub),
                action=self._write(f"patch {res.kind} {name}"),
                query=[("fieldManager", FIELD_MANAGER)],
                body=patch,
                content_type="application/merge-patch+json",
            )
        )

    def post(self, path: str, *, action: str, query: list[tuple[str, str]] | None = None) -> Any:
        """POST with an empty body to any path (a pod's HTTP server through the API
        server's `pods/proxy`)."""
        action = self._write(action)
        return self.transport.call("POST", path, action=action, query=query or [], body={})

    def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        """Read one object; `NotFoundError` when absent."""
        return dict(
            self.transport.call("GET", res.path(namespace, name), action=f"read {res.kind} {name}")
        )

    def find(self, res: Resource, name: str, namespace: str | None = None) -> Obj | None:
        """Read one object, or None when absent."""
        found = self.transport.call(
            "GET",
            res.path(namespace, name),
            action=f"read {res.kind} {name}",
            ok_statuses=frozenset({404}),
        )
        return dict(found) if found else None

    def list(
        self, res: Resource, namespace: str | None = None, *, label_selector: str = ""
    ) -> tuple[list[Obj], str]:
        """Objects and the list's resourceVersion (to watch from), read `LIST_PAGE` at a
        time as client-go's pager reads them: no answer is larger than a page, so neither
        side holds a list of 10,000 objects as one text, and what is sent meanwhile (a Lease
        renewal) is answered between pages. A continue token that expired (410) restarts
        as one unpaginated list (client-go's `FullListIfExpired`)."""
        query = [("labelSelector", label_selector)] if label_selector else []
        items: list[Obj] = []
        version, token = "", ""
        while True:
            page = [*query, ("limit", str(LIST_PAGE))] + ([("continue", token)] if token else [])
            try:
                answer = self.transport.call(
                    "GET", res.path(namespace), action=f"list {res.plural}", query=page
                )
            except ClusterError as exc:
                if exc.status != 410 or not token:
                    raise
                answer = self.transport.call(
                    "GET", res.path(namespace), action=f"list {res.plural}", query=query
                )
                items, version = [], ""
            items += [dict(i, apiVersion=res.api_version, kind=res.kind) for i in answer["items"]]
            meta = answer.get("metadata") or {}
            # Every page of one list is of its first page's version (the server's snapshot).
            version = version or str(meta.get("resourceVersion", ""))
            token = str(meta.get("continue") or "")
            if not token:
                return items, version

    def delete(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        *,
        foreground: bool = True,
        uid: str = "",
        resource_version: str = "",
    ) -> bool:
        """Delete one object (and, in the foreground, what it owns). False if it was absent,
        or, with a `uid` / `resource_version` precondition, when the object of that name is
        no longer the one read (409 Conflict: it was recreated or changed since)."""
        body: Obj = {"propagationPolicy": "Foreground" if foreground else "Background"}
        preconditions = {"uid": uid, "resourceVersion": resource_version}
        if uid or resource_version:
            body["preconditions"] = {k: v for k, v in preconditions.items() if v}
        answer = self.transport.call(
            "DELETE",
            res.path(namespace, name),
            action=self._write(f"delete {res.kind} {name}"),
            body=body,
            ok_statuses=frozenset({404, 409}) if body.get("preconditions") else frozenset({404}),
        )
        return answer is not None

    def raw(
        self,
        path: str,
        *,
        action: str,
        missing_ok: bool = False,
        query: Sequence[tuple[str, str]] = (),
    ) -> Any:
        """GET any path (discovery, the Kueue visibility API), with `query` parameters."""
        ok = frozenset({404}) if missing_ok else frozenset()
        return self.transport.call("GET", path, action=action, ok_statuses=ok, query=query)

    def watch(
        self,
        res: Resource,
        namespace: str | None,
        *,
        resource_version: str,
        label_selector: str = "",
        timeout_seconds: int = 300,
    ) -> WatchStream:
        """Open a watch after `resource_version` (BOOKMARKs on). Iterate the returned stream
        for (type, object) events; `close()` it from another thread to stop early."""
        query = [
            ("watch", "true"),
            ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(timeout_seconds)),
        ]
        if label_selector:
            query.append(("labelSelector", label_selector))
        try:
            response = self.transport.open_stream(
                res.path(namespace),
                action=f"watch {res.plural}",
                query=query,
                timeout=timeout_seconds + 30,
            )
        except ClusterError as exc:
            if exc.status == 410:
                raise WatchExpired(str(exc)) from None
            raise
        return WatchStream(response, res)

    def pod_log(
        self,
        name: str,
        namespace: str,
        *,
        follow: bool,
        timestamps: bool = False,
        container: str | None = None,
    ) -> Iterator[str]:
        """Log lines of a pod's `container` (None: its only one), following new lines when
        asked; `timestamps`: each after the time the kubelet read it (RFC 3339, nanoseconds,
        and a space)."""
        from gkeml_sdk.backends.kubernetes.api.resources import resource

        pods = resource(kinds.CORE, "Pod")
        query = [("container", container)] if container else []
        if follow:
            query.append(("follow", "true"))
        if timestamps:
            query.append(("timestamps", "true"))
        stream = self.transport.open_stream(
            pods.path(namespace, name, "log"),
            action=f"read log of pod {name}",
            query=query,
            timeout=None if follow else self.transport.request_timeout,
        )
        try:
            buffer = b""
            for chunk in stream.stream(4096, decode_content=True):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    yield line.decode(errors="replace")
            if buffer:
                yield buffer.decode(errors="replace")
        finally:
            stream.release_conn()


class WatchStream:
    """An open watch connection: iterate for events; raises `WatchExpired` on 410 Gone and
    `TransientError` when the connection drops, so the caller resumes or relists."""

    def __init__(self, response: Any, res: Resource) -> None:
        self._response = response
        self._res = res
        self.closed = False

    def __iter__(self) -> Iterator[tuple[str, Obj]]:
        try:
            yield from _events(self._response, self._res)
        except WatchExpired:
            raise
        except Exception as exc:
            if self.closed:
                return
            if isinstance(exc, (OSError, ValueError)) or type(exc).__module__.startswith("urllib3"):
                raise TransientError(f"watch {self._res.plural} dropped: {exc}") from exc
            raise
        finally:
            self.close()

    def close(self) -> None:
        """Stop the stream (safe from another thread)."""
        if not self.closed:
            self.closed = True
            # An already closed socket has nothing left to stop.
            with contextlib.suppress(Exception):
                self._response.shutdown()
            # Close the connection, not back into the pool: shutdown() stops only our reading,
            # and a pooled socket would keep the server's watch alive until its timeout.
            with contextlib.suppress(Exception):
                self._response.close()


def _events(stream: Any, res: Resource) -> Iterator[tuple[str, Obj]]:
    buffer = b""
    for chunk in stream.stream(65536, decode_content=True):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            event = json.loads(line)
            kind, obj = event.get("type", ""), event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise WatchExpired(obj.get("message", "resourceVersion too old"))
                raise TransientError(f"watch {res.plural}: {obj.get('message', obj)}")
            obj.setdefault("apiVersion", res.api_version)
            obj.setdefault("kind", res.kind)
            yield kind, obj
