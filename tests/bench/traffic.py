"""Requests through a real proxy during a failover drill: HAProxy on loopback routes each
model's traffic between a primary and a standby server by the weights of the tenant's
compiled route (VirtualService), pushed to HAProxy's runtime API whenever the route changes,
with the route's retries (3 more tries on connect failure or 503, each to a server picked
again). The servers answer as the fake cluster's pods are: a primary serves while one of its
pods is Ready, a standby while one of its pods is Ready and awake. A client counts what each
request got: served by the primary, by the standby, or failed."""

from __future__ import annotations

import http.client
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from gkeml_sdk.tenancy.routes import RETRY_ATTEMPTS
from tests.kubeapi import KubeAPIServer

Obj = dict[str, Any]


def haproxy() -> str | None:
    """The haproxy binary, or None (`apt-get install haproxy`)."""
    return shutil.which("haproxy")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Pods:
    """Answers like the pods of one Deployment of the fake cluster."""

    def __init__(self, server: KubeAPIServer, namespace: str, serve: str, role: str) -> None:
        self.server, self.namespace, self.serve, self.role = server, namespace, serve, role

    def serving(self) -> bool:
        for pod in self.server.store.list("pods", self.namespace, f"gkeml.dev/serve={self.serve}"):
            conditions = (pod.get("status") or {}).get("conditions") or []
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
            asleep = (pod["metadata"].get("annotations") or {}).get("gkeml.dev/asleep") == "true"
            if ready and not asleep:
                return True
        return False

    def start(self) -> tuple[ThreadingHTTPServer, int]:
        pods = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                code, body = (200, pods.role.encode()) if pods.serving() else (503, b"down")
                try:
                    self.send_response(code)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # HAProxy gave up on this try: nothing to answer
                    self.close_connection = True

            def log_message(self, *args: Any) -> None:
                return

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        return httpd, int(httpd.server_address[1])


@dataclass
class Model:
    tenant: str
    model: str
    port: int = 0  # the proxy's frontend for this model
    weights: tuple[int, int] = (-1, -1)


class Proxy:
    """HAProxy with a frontend per model, fed from the routes in the fake cluster."""

    def __init__(self, server: KubeAPIServer, models: list[tuple[str, str]]) -> None:
        self.server = server
        self.models = [Model(t, m) for t, m in models]
        self._dir = Path(tempfile.mkdtemp(prefix="gkeml-haproxy-"))
        self._socket = self._dir / "admin.sock"
        self._servers: list[ThreadingHTTPServer] = []
        self._stop = threading.Event()
        self._process: subprocess.Popen[bytes] | None = None
        self.weight_changes: list[tuple[float, str, tuple[int, int]]] = []

    def __enter__(self) -> Proxy:
        lines = [
            "global",
            f"  stats socket {self._socket} level admin",
            "defaults",
            "  mode http",
            "  timeout connect 1s",
            "  timeout client 5s",
            "  timeout server 5s",  # the route's perTryTimeout
            f"  retries {RETRY_ATTEMPTS}",
            "  option redispatch 1",  # every retry picks a server again
            "  retry-on conn-failure 503",  # the route's retryOn
        ]
        for i, model in enumerate(self.models):
            model.port = _free_port()
            ports = []
            for role, serve in (("primary", model.model), ("standby", f"{model.model}-standby")):
                httpd, port = _Pods(self.server, model.tenant, serve, role).start()
                self._servers.append(httpd)
                ports.append(port)
            lines += [
                f"frontend f{i}",
                f"  bind 127.0.0.1:{model.port}",
                f"  default_backend b{i}",
                f"backend b{i}",
                "  balance random",
                f"  server primary 127.0.0.1:{ports[0]} weight 0",
                f"  server standby 127.0.0.1:{ports[1]} weight 0",
            ]
        config = self._dir / "haproxy.cfg"
        config.write_text("\n".join(lines) + "\n")
        binary = haproxy()
        assert binary is not None
        self._process = subprocess.Popen([binary, "-f", str(config), "-db"])
        end = time.monotonic() + 10
        while not self._socket.exists() and time.monotonic() < end:
            time.sleep(0.05)
        self._feed()
        threading.Thread(target=self._follow_routes, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
        for httpd in self._servers:
            httpd.shutdown()
        shutil.rmtree(self._dir, ignore_errors=True)

    def port(self, model: str) -> int:
        return next(m.port for m in self.models if m.model == model)

    def _follow_routes(self) -> None:
        store = self.server.store
        while not self._stop.is_set():
            with store.changed:
                store.changed.wait(0.05)
            self._feed()

    def _feed(self) -> None:
        for i, model in enumerate(self.models):
            vs = self.server.store.get("virtualservices", model.tenant, f"{model.tenant}-models")
            rule = next(
                (r for r in (vs or {}).get("spec", {}).get("http", []) if r["name"] == model.model),
                None,
            )
            if rule is None:
                continue
            weights = (int(rule["route"][0]["weight"]), int(rule["route"][1]["weight"]))
            if weights == model.weights:
                continue
            for name, weight in zip(("primary", "standby"), weights, strict=True):
                self._admin(f"set server b{i}/{name} weight {weight}")
            model.weights = weights
            self.weight_changes.append((time.monotonic(), model.model, weights))

    def _admin(self, command: str) -> str:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self._socket))
            s.sendall(command.encode() + b"\n")
            return s.recv(4096).decode()


@dataclass
class Traffic:
    """A client sending a request every `interval` seconds to one model's frontend."""

    port: int
    interval: float = 0.02
    outcomes: list[tuple[float, str]] = field(default_factory=list)  # (sent, outcome)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> Traffic:
        threading.Thread(target=self._run, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            sent = time.monotonic()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("GET", "/v1/models")
                answer = conn.getresponse()
                body = answer.read().decode()
                conn.close()
                outcome = body if answer.status == 200 else "failed"
            except OSError:
                outcome = "failed"
            self.outcomes.append((sent, outcome))
            self._stop.wait(self.interval)

    def since(self, start: float, end: float) -> dict[str, Any]:
        """Counts from `start` (the primary's loss) until the first request the standby
        served after `end` (the route's recovery), and the time from `start` to the first
        request the standby served. A request sent in the first milliseconds may still
        reach the primary: its readiness is written just after `start`."""
        window = [(t, o) for t, o in self.outcomes if t >= start]
        counts = {"failed": 0, "primary": 0, "standby": 0}
        first_served = None
        for sent, outcome in window:
            counts[outcome] += 1
            if outcome == "standby" and first_served is None:
                first_served = sent - start
            if outcome == "standby" and sent >= end:
                break
        return {**counts, "first_served": first_served}
