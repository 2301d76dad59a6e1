"""`GkeAPIServer`: the GKE v1 REST API's node pool and operation methods on 127.0.0.1, for
the real `google-cloud-container` client over its REST transport.

Answers as container.googleapis.com does: create, resize, autoscaling and delete return an
`Operation` that goes PENDING -> RUNNING -> DONE as it is read; errors are
`{"error": {"code", "message", "status"}}`; request bodies are checked against the API's
schema; lack of quota is 403 PERMISSION_DENIED "Insufficient regional quota ...".
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from google.cloud import container_v1

from .state import ApiError, Fault, State, dump, parse

_LOC = r"projects/[^/]+/locations/[^/]+"
_ROUTES = [
    ("POST", rf"/v1/({_LOC}/clusters/[^/]+)/nodePools", "create"),
    ("GET", rf"/v1/({_LOC}/clusters/[^/]+)/nodePools", "list"),
    ("GET", rf"/v1/({_LOC}/clusters/[^/]+/nodePools/[^/:]+)", "get"),
    ("DELETE", rf"/v1/({_LOC}/clusters/[^/]+/nodePools/[^/:]+)", "delete"),
    ("POST", rf"/v1/({_LOC}/clusters/[^/]+/nodePools/[^/:]+):setSize", "set_size"),
    ("POST", rf"/v1/({_LOC}/clusters/[^/]+/nodePools/[^/:]+):setAutoscaling", "autoscaling"),
    ("GET", rf"/v1/({_LOC}/operations/[^/]+)", "operation"),
    ("GET", rf"/v1/({_LOC})/operations", "operations"),
]


class GkeAPIServer:
    """In-process fake of container.googleapis.com (v1) for node pools.

    Example:
        with GkeAPIServer(clusters=["projects/p/locations/us-central1/clusters/ml"]) as gke:
            client = gke.client()   # a real container_v1.ClusterManagerClient
    """

    def __init__(self, clusters: list[str] = ()) -> None:  # type: ignore[assignment]
        self.state = State(clusters=set(clusters))
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> GkeAPIServer:
        handler = type("Handler", (_Handler,), {"state": self.state})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self.state.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def client(self) -> container_v1.ClusterManagerClient:
        """The real client library, over REST, anonymous, pointed here."""
        from google.auth.credentials import AnonymousCredentials

        return container_v1.ClusterManagerClient(
            credentials=AnonymousCredentials(),
            transport="rest",
            client_options={"api_endpoint": self.url},
        )

    def fail(
        self, method: str, path: str, code: int, message: str, times: int = 1, after: bool = False
    ) -> None:
        """Answer the next `times` `method` requests whose path matches `path` with `code`;
        `after`: the request takes effect first, and only its answer is the error."""
        self.state.faults.append(Fault(method, path, ApiError(code, message), times, after))

    def break_transport(
        self, method: str, path: str, how: str, times: int = 1, status: int = 502
    ) -> None:
        """Answer the next `times` matching requests below the API (`Fault.transport`):
        "html" (a Google front end's error page, as GFE sends for a 502), "drop", "hang" or
        "trickle" (a slow link or proxy: the body a byte every 20 ms until `State.release`)."""
        error = ApiError(status if status in (429, 500, 503) else 503, "")
        self.state.faults.append(Fault(method, path, error, times, transport=how, status=status))

    def fail_create(self, pool: str, code: int, message: str) -> None:
        """Let pool `pool`'s create operation end DONE with a google.rpc error."""
        self.state.failing_creates[pool] = (code, message)

    def deny(self, permission: str) -> None:
        """Take IAM permission `permission` (e.g. container.nodePools.create) from the caller."""
        self.state.denied.add(permission)


class _Handler(BaseHTTPRequestHandler):
    state: State
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        ints = "enum-encoding=int" in parse_qs(url.query).get("$alt", [""])[0]
        try:
            with self.state.lock:
                self.state.log.append((method, url.path))
                fault = self.state.take_fault(method, url.path)
                if fault is not None and fault.transport:
                    return self._break(fault)
                if fault is not None and not fault.after:
                    raise fault.error
                answer = self._route(method, url.path, json.loads(raw) if raw else {})
                if fault is not None:
                    raise fault.error
            self._reply(200, dump(answer, ints) if not isinstance(answer, dict) else answer)
        except ApiError as err:
            self._reply(err.code, err.body())

    def _route(self, method: str, path: str, body: dict[str, Any]) -> Any:
        for verb, pattern, action in _ROUTES:
            match = re.fullmatch(pattern, path)
            if verb == method and match:
                return getattr(self, f"_{action}")(match.group(1), body)
        raise ApiError(404, f"Not found: {path}", "NOT_FOUND")

    def _cluster(self, name: str, permission: str) -> str:
        cluster = name.split("/nodePools/")[0]
        self.state.check_permission(permission, cluster)
        if cluster not in self.state.clusters:
            raise ApiError(404, f"Not found: {cluster}.")
        return cluster

    def _pool(self, name: str, permission: str) -> dict[str, Any]:
        self._cluster(name, permission)
        if name not in self.state.pools:
            raise ApiError(404, f"Not found: {name}.")
        return self.state.pools[name]

    def _create(self, cluster: str, body: dict[str, Any]) -> Any:
        self._cluster(cluster, "container.nodePools.create")
        request = parse(container_v1.CreateNodePoolRequest, body)
        pool = request.node_pool
        _validate(pool)
        name = f"{cluster}/nodePools/{pool.name}"
        if name in self.state.pools:
            raise ApiError(409, f"Already exists: {name}.")
        pool.status = container_v1.NodePool.Status.PROVISIONING
        self.state.pools[name] = data = dump(pool, False)

        def running() -> None:
            data["status"] = "RUNNING"

        location = cluster.split("/clusters/")[0]
        error = self.state.failing_creates.get(pool.name)
        return self.state.start(location, "CREATE_NODE_POOL", name, running, error)

    def _list(self, cluster: str, body: dict[str, Any]) -> Any:
        self._cluster(cluster, "container.nodePools.list")
        pools = [p for n, p in self.state.pools.items() if n.startswith(f"{cluster}/")]
        return {"nodePools": pools} if pools else {}

    def _get(self, name: str, body: dict[str, Any]) -> Any:
        return parse(container_v1.NodePool, self._pool(name, "container.nodePools.get"))

    def _delete(self, name: str, body: dict[str, Any]) -> Any:
        self._pool(name, "container.nodePools.delete")
        location = name.split("/clusters/")[0]
        return self.state.start(
            location, "DELETE_NODE_POOL", name, lambda: self.state.pools.pop(name, None)
        )

    def _set_size(self, name: str, body: dict[str, Any]) -> Any:
        self._pool(name, "container.nodePools.update")
        request = parse(container_v1.SetNodePoolSizeRequest, body)
        location = name.split("/clusters/")[0]
        nodes = request.node_count
        return self.state.start(
            location, "SET_NODE_POOL_SIZE", name, lambda: self.state.sizes.update({name: nodes})
        )

    def _autoscaling(self, name: str, body: dict[str, Any]) -> Any:
        data = self._pool(name, "container.nodePools.update")
        request = parse(container_v1.SetNodePoolAutoscalingRequest, body)
        scaling = dump(request.autoscaling, False)
        location = name.split("/clusters/")[0]
        return self.state.start(
            location, "UPDATE_CLUSTER", name, lambda: data.update({"autoscaling": scaling})
        )

    def _operations(self, location: str, body: dict[str, Any]) -> Any:
        self.state.check_permission("container.operations.list", location)
        ops = [
            dump(op.message, False) for n, op in self.state.ops.items() if n.startswith(location)
        ]
        return {"operations": ops} if ops else {}

    def _operation(self, name: str, body: dict[str, Any]) -> Any:
        self.state.check_permission("container.operations.get", name)
        return self.state.advance(name)

    def _break(self, fault: Fault) -> None:
        if fault.transport == "trickle":
            self.state.lock.release()  # other requests go on while this one trickles
            try:
                return self._trickle()
            finally:
                self.state.lock.acquire()
        if fault.transport == "hang":
            self.state.lock.release()  # other requests go on while this one hangs
            try:
                self.state.release.wait()
            finally:
                self.state.lock.acquire()
        if fault.transport in ("hang", "drop"):
            self.close_connection = True
            self.connection.close()
            return
        page = b"<html><body><h1>502 Server Error</h1>The server encountered an error.</body>"
        self.send_response(fault.status)
        self.send_header("Content-Type", "text/html; charset=UTF-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def _trickle(self) -> None:
        body = b"{" + b" " * 100_000 + b"}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for byte in body:
            if self.state.release.wait(0.02):
                break  # the test is over: stop, the answer unfinished
            try:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
            except OSError:
                break  # the client gave up and closed the connection
        self.close_connection = True

    def _reply(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _validate(pool: container_v1.NodePool) -> None:
    """What GKE refuses in a node pool before starting an operation (a subset)."""
    if not re.fullmatch(r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?", pool.name):
        raise ApiError(400, f'Invalid value for field "node_pool.name": "{pool.name}".')
    config = pool.config
    for accelerator in config.accelerators:
        if accelerator.accelerator_count < 1:
            raise ApiError(400, "Accelerator count must be positive.")
    if pool.queued_provisioning.enabled:
        scaling = pool.autoscaling
        no_reservation = container_v1.ReservationAffinity.Type.NO_RESERVATION
        if config.spot or config.preemptible:
            raise ApiError(400, "Queued provisioning cannot be used with Spot VMs.")
        if not scaling.enabled or pool.initial_node_count:
            raise ApiError(
                400, "Queued provisioning requires autoscaling and an initial node count of 0."
            )
        if config.reservation_affinity.consume_reservation_type != no_reservation:
            raise ApiError(400, "Queued provisioning requires reservation affinity NONE.")
        if pool.management.auto_repair:
            raise ApiError(400, "Queued provisioning requires auto-repair to be disabled.")
