"""Maps (method, path, query) to discovery documents, REST verbs, watches and pod logs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from . import discovery, errors
from .api import Api
from .calls import Call, Reply
from .objects import parse_bool
from .podproxy import PROXY_PATH
from .routing import parse_resource_path
from .visibility import pending_page
from .watch import WatchOptions, WatchStream

if TYPE_CHECKING:
    from .server import KubeAPIServer

_VERB = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass
class LogRequest:
    namespace: str
    pod: str
    container: str | None
    follow: bool
    tail_lines: int | None
    limit_bytes: int | None
    timestamps: bool = False


class Dispatcher:
    def __init__(self, kube: KubeAPIServer, api: Api) -> None:
        self.kube = kube
        self.api = api

    def handle(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: bytes,
        content_type: str,
        user_agent: str,
        cut_after: int | None = None,
        accept: str = "",
    ) -> Reply | WatchStream | LogRequest:
        path = path.rstrip("/") or "/"
        if method == "GET" and path in self.kube.aggregated:
            answer = self.kube.aggregated[path]
            answer = answer() if callable(answer) else answer
            if path.endswith("/pendingworkloads"):
                answer = pending_page(answer, query)
            return Reply(200, answer)
        if method == "GET":
            doc = self._discovery(path)
            if doc is not None:
                return Reply(200, doc)
        if PROXY_PATH.match(unquote(path)):
            return self.kube.pod_proxy.forward(method, path, query, body)
        route = parse_resource_path(path)
        if route is None:
            if path in ("/healthz", "/livez", "/readyz"):
                return Reply(200, "ok")
            raise errors.resource_not_found()
        registry = self.kube.registry
        rt = registry.get(route.group, route.version, route.plural)
        if rt is None or (route.namespace and not rt.namespaced):
            raise errors.resource_not_found()
        if route.namespace in self.kube.forbidden_namespaces:
            verb = _VERB.get(method, method.lower())
            if method == "GET" and route.name is None:
                verb = "watch" if parse_bool(query.get("watch")) else "list"
            raise errors.forbidden(rt, verb, route.plural, route.namespace)
        if route.subresource and route.subresource not in rt.subresources:
            raise errors.resource_not_found()
        call = Call(
            rt,
            route.version,
            route.namespace,
            route.name,
            route.subresource,
            query,
            body,
            content_type or "application/json",
            user_agent,
            accept,
        )
        if method == "GET" and route.subresource == "log":
            return self._log_request(call)
        if method == "GET" and route.name is None:
            if route.legacy_watch or parse_bool(query.get("watch")):
                return self._watch(call, cut_after)
            return self.api.list(call)
        if method in ("POST", "PUT", "PATCH", "DELETE") and rt.read_only:
            raise errors.method_not_allowed()
        return self._verb(method, call)

    def _verb(self, method: str, call: Call) -> Reply:
        table: dict[tuple[str, bool], Callable[[Call], Reply]] = {
            ("GET", True): self.api.get,
            ("POST", False): self.api.create,
            ("PUT", True): self.api.replace,
            ("PATCH", True): self.api.patch,
            ("DELETE", True): self.api.delete,
            ("DELETE", False): self.api.delete_collection,
        }
        fn = table.get((method, call.name is not None))
        if fn is None or (call.subresource and method not in ("GET", "PUT", "PATCH")):
            raise errors.method_not_allowed()
        if method == "POST" and call.rt.namespaced and not call.namespace:
            raise errors.resource_not_found()
        return fn(call)

    def _discovery(self, path: str) -> dict[str, Any] | None:
        registry = self.kube.registry
        parts = [p for p in path.split("/") if p]
        if path == "/version":
            return discovery.version_info(self.kube.k8s_version)
        if parts == ["api"]:
            return discovery.api_versions(self.kube.address)
        if parts == ["api", "v1"]:
            return discovery.resource_list(registry, "", "v1")
        if parts == ["apis"]:
            return discovery.api_group_list(registry)
        if len(parts) == 2 and parts[0] == "apis":
            return discovery.api_group(registry, parts[1])
        if len(parts) == 3 and parts[0] == "apis":
            return discovery.resource_list(registry, parts[1], parts[2])
        return None

    def _watch(self, call: Call, cut_after: int | None) -> WatchStream:
        kube = self.kube  # like list, watching a namespace that does not exist is not an error
        generation = kube.cut_generation
        opts = WatchOptions(
            bookmark_interval=kube.bookmark_interval,
            max_seconds=kube.watch_max_seconds,
            should_stop=lambda: kube.stopping,
            should_cut=lambda: kube.cut_generation != generation,
            cut_after=cut_after,
        )
        return WatchStream(kube.store, call, self.api.matcher(call), opts)

    def _log_request(self, call: Call) -> LogRequest:
        assert call.name is not None
        pod = self.api.get(call).body
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        # An init container's log is read by its name too; only the default is the one app
        # container (kubelet's validateContainer).
        named = containers + [
            c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []
        ]
        container = call.q("container")
        if container is None and len(containers) > 1:
            raise errors.bad_request(
                f"a container name must be specified for pod {call.name}, choose one of: "
                f"[{' '.join(str(c) for c in containers)}]"
            )
        if container is not None and named and container not in named:
            raise errors.bad_request(f"container {container} is not valid for pod {call.name}")
        if container is None and len(containers) == 1:
            container = containers[0]
        tail = call.q("tailLines")
        limit = call.q("limitBytes")
        return LogRequest(
            call.namespace,
            call.name,
            container or None,
            parse_bool(call.q("follow")),
            int(tail) if tail else None,
            int(limit) if limit else None,
            parse_bool(call.q("timestamps")),
        )
