"""`pods/proxy`: the API server forwarding an HTTP request to a pod's port, as
`/api/v1/namespaces/NS/pods/NAME[:PORT]/proxy/PATH` does. Tests play the pod's server by
registering a handler; a pod without an IP or without a listener answers as kube-apiserver
does (503 "error trying to reach service")."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from . import errors
from .calls import Reply
from .store import Store

PROXY_PATH = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/:]+)(?::(\d+))?/proxy(/.*)?$")
# (method, path with query, body) -> (status, JSON or text body)
PodHandler = Callable[[str, str, bytes], tuple[int, Any]]


class PodProxy:
    """Registered pod servers, keyed by (namespace, pod, port)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._handlers: dict[tuple[str, str, int], PodHandler] = {}
        self._lock = threading.Lock()

    def serve(self, namespace: str, pod: str, port: int, handler: PodHandler) -> None:
        """Make `handler` answer requests proxied to the pod's port."""
        with self._lock:
            self._handlers[(namespace, pod, port)] = handler

    def forward(self, method: str, path: str, query: dict[str, str], body: bytes) -> Reply:
        match = PROXY_PATH.match(unquote(path))  # Go's server decodes the path (%3A is ':')
        assert match is not None
        namespace, name, port_text, rest = match.groups()
        pod = self.store.get("pods", namespace, name)
        if pod is None:
            raise errors.not_found(self.store.resolve("pods"), name)
        ports = [
            p.get("containerPort")
            for c in (pod.get("spec") or {}).get("containers") or []
            for p in c.get("ports") or []
        ]
        port = int(port_text) if port_text else (ports[0] if ports else 80)
        ip = (pod.get("status") or {}).get("podIP")
        if not ip:
            raise errors.ApiError(
                503, "ServiceUnavailable", f'pod "{name}" does not have a pod IP address'
            )
        with self._lock:
            handler = self._handlers.get((namespace, name, int(port)))
        if handler is None:
            raise errors.ApiError(
                503,
                "ServiceUnavailable",
                f"error trying to reach service: dial tcp {ip}:{port}: connect: connection refused",
            )
        target = (rest or "/") + (
            "?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""
        )
        status, answer = handler(method, target, body)
        return Reply(status, answer)
