"""Requests through a router that behaves as the tenant's compiled route during a failover
drill: a loopback HTTP proxy per model that, for each request, reads the tenant's route
(VirtualService or HTTPRoute) from the fake cluster as it is at that instant, picks the
primary's or the standby's destination once by its weights, and sends every retry (the
route's `retries.attempts`; none on an HTTPRoute) to that same destination, as Istio and the
Gateway do (`gkeml_sdk.backends.kubernetes.standby.user_traffic`). A destination's server
answers as the fake cluster's pods are: 200 while one of its pods is Ready and its engine
awake (the fake kubelet's vLLM, which a warm standby's `/sleep` puts to sleep), else 503.
A client counts what each request got: served by the primary, by the standby, or failed."""

from __future__ import annotations

import http.client
import random
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from gkeml_sdk.backends.kubernetes.standby.user_traffic import pick, route_split, route_tries
from tests.kubeapi.kubelet import FakeKubelet

Obj = dict[str, Any]


def _serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, int(httpd.server_address[1])


class _Quiet(BaseHTTPRequestHandler):
    def answer(self, code: int, body: bytes) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client gave up on this try: nothing to answer
            self.close_connection = True

    def log_message(self, *args: Any) -> None:
        return


class _Pods:
    """Answers like the pods behind one Service of the fake cluster."""

    def __init__(self, kubelet: FakeKubelet, namespace: str, serve: str, role: str) -> None:
        self.kubelet, self.namespace, self.serve, self.role = kubelet, namespace, serve, role
        self.tries = 0  # requests the router sent here

    def serving(self) -> bool:
        store = self.kubelet.server.store
        for pod in store.list("pods", self.namespace, f"gkeml.dev/serve={self.serve}"):
            conditions = (pod.get("status") or {}).get("conditions") or []
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
            asleep = self.kubelet.sleeping.get((self.namespace, pod["metadata"]["name"]), False)
            if ready and not asleep:
                return True
        return False

    def start(self) -> tuple[ThreadingHTTPServer, int]:
        pods = self

        class Handler(_Quiet):
            def do_GET(self) -> None:
                pods.tries += 1
                serving = pods.serving()
                self.answer(200 if serving else 503, pods.role.encode() if serving else b"down")

        return _serve(Handler)


@dataclass
class Model:
    tenant: str
    model: str
    port: int = 0  # the router's port for this model
    backends: dict[str, _Pods] = field(default_factory=dict)  # by destination
    ports: dict[str, int] = field(default_factory=dict)  # destination -> server port


class Router:
    """One loopback router per model, routing as the tenant's compiled route does."""

    def __init__(self, kubelet: FakeKubelet, models: list[tuple[str, str]], seed: int = 0) -> None:
        self.kubelet = kubelet
        self.models = [Model(t, m) for t, m in models]
        self._servers: list[ThreadingHTTPServer] = []
        self._rng, self._lock = random.Random(seed), threading.Lock()

    def __enter__(self) -> Router:
        for model in self.models:
            for role, serve in (("primary", model.model), ("standby", f"{model.model}-standby")):
                model.backends[serve] = _Pods(self.kubelet, model.tenant, serve, role)
                httpd, model.ports[serve] = model.backends[serve].start()
                self._servers.append(httpd)
            httpd, model.port = _serve(self._handler(model))
            self._servers.append(httpd)
        return self

    def __exit__(self, *exc: object) -> None:
        for httpd in self._servers:
            httpd.shutdown()

    def port(self, model: str) -> int:
        return next(m.port for m in self.models if m.model == model)

    def tries(self, destination: str) -> int:
        """Requests the router sent to `destination`'s server, retries included."""
        return sum(m.backends[destination].tries for m in self.models if destination in m.backends)

    def _route(self, model: Model) -> Obj | None:
        store = self.kubelet.server.store
        name = f"{model.tenant}-models"
        return store.get("virtualservices", model.tenant, name) or store.get(
            "httproutes", model.tenant, name
        )

    def _handler(self, model: Model) -> type[BaseHTTPRequestHandler]:
        router = self

        class Handler(_Quiet):
            def do_GET(self) -> None:
                route = router._route(model)
                with router._lock:
                    destination = pick(route_split(route, model.model), router._rng)
                for _ in range(route_tries(route, model.model) if destination else 0):
                    code, body = get(model.ports[str(destination)], self.path)
                    if code == 200:
                        self.answer(200, body)
                        return
                self.answer(503, b"no healthy upstream")

        return Handler


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)  # perTryTimeout
        conn.request("GET", path)
        answer = conn.getresponse()
        body = answer.read()
        conn.close()
        return answer.status, body
    except OSError:
        return 503, b""  # connect-failure, retried as retryOn says


@dataclass
class Traffic:
    """A client sending a request every `interval` seconds to one model's router."""

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
            code, body = get(self.port, "/v1/completions")
            self.outcomes.append((sent, body.decode() if code == 200 else "failed"))
            self._stop.wait(self.interval)

    def since(self, start: float, end: float) -> dict[str, Any]:
        """Counts of the requests sent from `start` (the primary's loss) until `end` (the
        route's recovery), and the time from `start` to the first request the standby
        served. A request sent in the first milliseconds may still reach the primary: its
        readiness is written just after `start`."""
        counts = {"failed": 0, "primary": 0, "standby": 0}
        first_served = None
        for sent, outcome in list(self.outcomes):
            if start <= sent <= end:
                counts[outcome] += 1
            if outcome == "standby" and sent >= start and first_served is None:
                first_served = sent - start
        return {**counts, "first_served": first_served}
