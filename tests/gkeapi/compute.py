"""`ComputeAPIServer`: Compute Engine v1 REST networks, subnetworks and operations on
127.0.0.1, for the real `google-cloud-compute` clients over REST. Followed from the API
reference (compute/docs/reference/rest/v1: networks.insert/get, subnetworks.insert/get,
globalOperations.get, regionOperations.get, regions.get, projects.get): inserts answer a
`compute#operation` that goes PENDING -> RUNNING -> DONE as it is read; a missing resource
is 404 with
`{"error": {"code": 404, "message": "The resource '...' was not found", "errors": [...]}}`;
a second insert of a name is 409 alreadyExists; a subnet's network must exist (400).
Quotas are `{metric, limit, usage}` entries (numbers, as the API's JSON has them) of a
`compute#region` (`regions.get`, 404 for a region the fake was not given) and of the
`compute#project` (`projects.get`: project-wide ones such as GPUS_ALL_REGIONS)."""

from __future__ import annotations

import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_P = r"/compute/v1/projects/([^/]+)"
_ROUTES = [
    ("POST", rf"{_P}/global/networks", "insert_network"),
    ("GET", rf"{_P}/global/networks/([^/]+)", "get_network"),
    ("POST", rf"{_P}/regions/([^/]+)/subnetworks", "insert_subnet"),
    ("GET", rf"{_P}/regions/([^/]+)/subnetworks/([^/]+)", "get_subnet"),
    ("GET", rf"{_P}/global/operations/([^/]+)", "get_global_op"),
    ("GET", rf"{_P}/regions/([^/]+)/operations/([^/]+)", "get_region_op"),
    ("GET", rf"{_P}/zones/([^/]+)/reservations/([^/]+)", "get_reservation"),
    ("GET", rf"{_P}/regions/([^/]+)", "get_region"),
    ("GET", _P, "get_project"),
]
_STATES = ("PENDING", "RUNNING", "DONE")


class ComputeAPIServer:
    """In-process fake of compute.googleapis.com (v1) for VPC networks and subnets.

    Example:
        with ComputeAPIServer() as compute:
            clients = compute.clients()   # real compute_v1 clients, anonymous, pointed here
    """

    def __init__(self) -> None:
        self.networks: dict[str, dict[str, Any]] = {}
        self.subnets: dict[str, dict[str, Any]] = {}
        self.operations: dict[str, dict[str, Any]] = {}
        self.reservations: dict[str, dict[str, Any]] = {}  # "project/zone/name" -> resource
        self.regions: dict[str, list[str]] = {}  # region -> its zones
        self.quotas: dict[str | None, dict[str, tuple[float, float]]] = {}  # None: project's
        self.denied: set[str] = set()  # paths answered 403 forbidden (a role without the get)
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self._ids = itertools.count(1)
        self._permissions: dict[str, str] = {}
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> ComputeAPIServer:
        handler = type("Handler", (_Handler,), {"api": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def clients(self) -> tuple[Any, Any, Any, Any]:
        """Networks, Subnetworks, GlobalOperations and RegionOperations clients over REST."""
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import compute_v1

        kw: dict[str, Any] = {"credentials": AnonymousCredentials(), "transport": "rest",
                              "client_options": {"api_endpoint": self.url}}  # fmt: skip
        kinds = ("NetworksClient", "SubnetworksClient", "GlobalOperationsClient",
                 "RegionOperationsClient")  # fmt: skip
        a, b, c, d = (getattr(compute_v1, kind)(**kw) for kind in kinds)
        return a, b, c, d

    # -- the API ---------------------------------------------------------------------------

    def insert_network(self, project: str, body: dict[str, Any]) -> dict[str, Any]:
        name = body["name"]
        if name in self.networks:
            raise _Error(
                409,
                f"The resource 'projects/{project}/global/networks/{name}' already exists",
                "alreadyExists",
            )
        self.networks[name] = {**body, "kind": "compute#network",
                               "selfLink": f"{self.url}/compute/v1/projects/{project}/"
                                           f"global/networks/{name}"}  # fmt: skip
        return self._operation(project, None, "insert", f"global/networks/{name}")

    def get_network(self, project: str, name: str) -> dict[str, Any]:
        return self._found(self.networks, name, f"projects/{project}/global/networks/{name}")

    def insert_subnet(self, project: str, region: str, body: dict[str, Any]) -> dict[str, Any]:
        name, network = body["name"], body.get("network", "").rsplit("/", 1)[-1]
        if network not in self.networks:
            raise _Error(
                400,
                f"Invalid value for field 'resource.network': '{body.get('network')}'. "
                "The referenced network resource cannot be found.",
                "invalid",
            )
        if name in self.subnets:
            raise _Error(
                409,
                f"The resource 'projects/{project}/regions/{region}/subnetworks/{name}' "
                "already exists",
                "alreadyExists",
            )
        self.subnets[name] = {**body, "kind": "compute#subnetwork", "region": region}
        return self._operation(project, region, "insert", f"regions/{region}/subnetworks/{name}")

    def get_subnet(self, project: str, region: str, name: str) -> dict[str, Any]:
        return self._found(
            self.subnets, name, f"projects/{project}/regions/{region}/subnetworks/{name}"
        )

    def get_global_op(self, project: str, name: str) -> dict[str, Any]:
        return self._advance(name)

    def get_region_op(self, project: str, region: str, name: str) -> dict[str, Any]:
        return self._advance(name)

    def get_reservation(self, project: str, zone: str, name: str) -> dict[str, Any]:
        path = f"projects/{project}/zones/{zone}/reservations/{name}"
        return self._found(self.reservations, f"{project}/{zone}/{name}", path)

    def reserve(self, project: str, zone: str, name: str, machine_type: str, count: int) -> None:
        """A specific reservation of `count` VMs, as reservations.get shows it."""
        self.reservations[f"{project}/{zone}/{name}"] = {
            "kind": "compute#reservation", "name": name, "zone": zone, "status": "READY",
            "specificReservation": {"count": str(count), "inUseCount": "0",
                                    "instanceProperties": {"machineType": machine_type}},
        }  # fmt: skip

    def add_region(self, region: str, zones: tuple[str, ...] = ("a", "b", "c")) -> None:
        """A region regions.get answers, with its zones (suffixes) and no quota yet."""
        self.regions[region] = [f"{region}-{z}" for z in zones]
        self.quotas.setdefault(region, {})

    def deny(self, path: str, permission: str) -> None:
        """Answer GETs of `path` 403 forbidden, as Compute Engine does for a caller without
        `permission` (compute.regions.get, ...)."""
        self.denied.add(path)
        self._permissions[path] = permission

    def grant(self, metric: str, limit: float, usage: float = 0, region: str | None = None) -> None:
        """A quota of the project: regional in `region`, project-wide when None."""
        self.quotas.setdefault(region, {})[metric] = (limit, usage)

    def get_region(self, project: str, region: str) -> dict[str, Any]:
        path = f"projects/{project}/regions/{region}"
        zones = self._found({r: {"zones": z} for r, z in self.regions.items()}, region, path)
        base = f"{self.url}/compute/v1/projects/{project}"
        number = 1000 + list(self.regions).index(region)
        return {"kind": "compute#region", "id": str(number), "name": region,
                "description": region, "status": "UP", "selfLink": f"{base}/regions/{region}",
                "zones": [f"{base}/zones/{z}" for z in zones["zones"]],
                "quotas": self._quota_list(region), "supportsPzs": False}  # fmt: skip

    def get_project(self, project: str) -> dict[str, Any]:
        return {"kind": "compute#project", "id": "1", "name": project,
                "selfLink": f"{self.url}/compute/v1/projects/{project}",
                "quotas": self._quota_list(None)}  # fmt: skip

    def _quota_list(self, region: str | None) -> list[dict[str, Any]]:
        found = self.quotas.get(region, {})
        return [{"metric": m, "limit": lim, "usage": use} for m, (lim, use) in found.items()]

    def _operation(
        self, project: str, region: str | None, kind: str, target: str
    ) -> dict[str, Any]:
        name = f"operation-{next(self._ids)}"
        op = {"kind": "compute#operation", "id": str(next(self._ids)), "name": name,
              "operationType": kind, "status": "PENDING", "progress": 0,
              "targetLink": f"{self.url}/compute/v1/projects/{project}/{target}"}  # fmt: skip
        if region is not None:
            op["region"] = region
        self.operations[name] = op
        return dict(op)

    def _advance(self, name: str) -> dict[str, Any]:
        op = self._found(self.operations, name, f"operations/{name}")
        i = _STATES.index(op["status"])
        op["status"] = _STATES[min(i + 1, 2)]
        op["progress"] = 100 if op["status"] == "DONE" else 50
        return dict(op)

    @staticmethod
    def _found(table: dict[str, dict[str, Any]], name: str, path: str) -> dict[str, Any]:
        if name not in table:
            raise _Error(404, f"The resource '{path}' was not found", "notFound")
        return table[name]


class _Error(Exception):
    def __init__(self, code: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason


class _Handler(BaseHTTPRequestHandler):
    api: ComputeAPIServer

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        path = self.path.split("?", 1)[0]
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        with self.api.lock:
            self.api.requests.append((method, path))
            try:
                if path in self.api.denied:
                    resource = path.split("/compute/v1/", 1)[1]
                    raise _Error(
                        403,
                        f"Required '{self.api._permissions[path]}' permission for '{resource}'",
                        "forbidden",
                    )
                for verb, pattern, handler in _ROUTES:
                    match = re.fullmatch(pattern, path)
                    if verb == method and match:
                        args = [*match.groups(), *([body] if method == "POST" else [])]
                        self._answer(200, getattr(self.api, handler)(*args))
                        return
                raise _Error(404, f"no route {method} {path}", "notFound")
            except _Error as err:
                errors = [{"message": err.message, "domain": "global", "reason": err.reason}]
                self._answer(err.code, {"error": {"code": err.code, "message": err.message,
                                                  "errors": errors}})  # fmt: skip

    def _answer(self, code: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
