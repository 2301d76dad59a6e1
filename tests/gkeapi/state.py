"""What the fake GKE API holds: clusters, node pools, long-running operations, and the
faults a test scripts. Bodies are read and written with `container_v1`'s own JSON mapping,
as the real API's front end does (unknown fields refused, enums as names or numbers)."""

from __future__ import annotations

import itertools
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from google.cloud import container_v1
from google.protobuf import json_format

SELF_LINK = "https://container.googleapis.com/v1"
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
           503: "UNAVAILABLE"}  # fmt: skip


class ApiError(Exception):
    """An error answer: `{"error": {"code", "message", "status"}}`."""

    def __init__(self, code: int, message: str, status: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status or _STATUS[code]

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "status": self.status}}


@dataclass
class Fault:
    """Answer the next `times` requests matching `method` and `path` (a regex) with an error."""

    method: str
    path: str
    error: ApiError
    times: int = 1
    after: bool = False  # the request takes effect and then the answer is lost
    # How the answer goes wrong below the API: "" an API error, "html" a front end's HTML
    # page (a load balancer's 502, a captive portal's 200), "drop" the connection closed
    # without an answer, "hang" no answer until the test sets `State.release`, "trickle" the
    # answer's body a byte at a time (each sooner than any read timeout) until it does.
    transport: str = ""
    status: int = 502  # the HTTP status of an "html" answer


@dataclass
class Op:
    """A long-running operation; it advances one status per read until DONE."""

    message: container_v1.Operation
    steps: list[int]  # statuses still to go, as Operation.Status numbers
    on_done: Any = None  # callable run once when the operation reaches DONE
    error: tuple[int, str] | None = None  # (google.rpc code, message) it ends with


@dataclass
class State:
    """Clusters, pools and operations of one fake project set, behind one lock."""

    clusters: set[str] = field(default_factory=set)  # projects/P/locations/L/clusters/C
    pools: dict[str, dict[str, Any]] = field(default_factory=dict)  # full name -> NodePool JSON
    ops: dict[str, Op] = field(default_factory=dict)  # full name -> operation
    sizes: dict[str, int] = field(default_factory=dict)  # pool full name -> nodes set by resize
    faults: list[Fault] = field(default_factory=list)
    # Pool name -> (google.rpc code, message) its create operation ends with.
    failing_creates: dict[str, tuple[int, str]] = field(default_factory=dict)
    denied: set[str] = field(default_factory=set)  # IAM permissions the caller lacks
    steps: tuple[int, ...] = (1, 2, 2, 3)  # PENDING, RUNNING, RUNNING, DONE
    log: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)  # ends "hang" faults
    _ids: Any = field(default_factory=lambda: itertools.count(1_700_000_000_000))

    def take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self.faults:
            if fault.method == method and re.fullmatch(fault.path, path) and fault.times:
                fault.times -= 1
                return fault
        return None

    def check_permission(self, permission: str, resource: str) -> None:
        if permission in self.denied:
            raise ApiError(403, f'Required "{permission}" permission(s) for "{resource}".')

    def start(self, location: str, kind: str, target: str, on_done: Any = None,
              error: tuple[int, str] | None = None) -> container_v1.Operation:  # fmt: skip
        project = location.split("/")[1]
        op_id = f"operation-{next(self._ids)}-{abs(hash(target)) % 16**8:08x}"
        name = f"{location}/operations/{op_id}"
        message = container_v1.Operation(
            name=op_id,
            zone=location.rsplit("/", 1)[-1],
            operation_type=container_v1.Operation.Type[kind],
            status=container_v1.Operation.Status(self.steps[0]),
            self_link=f"{SELF_LINK}/projects/{project}/{name.split('/', 2)[2]}",
            target_link=f"{SELF_LINK}/{target}",
            start_time="2026-12-01T07:00:00.000000Z",
        )
        self.ops[name] = Op(message, list(self.steps[1:]), on_done, error)
        return message

    def advance(self, name: str) -> container_v1.Operation:
        op = self.ops.get(name)
        if op is None:
            raise ApiError(404, f"Not found: {name}.")
        if op.steps:
            op.message.status = container_v1.Operation.Status(op.steps.pop(0))
            if op.message.status == container_v1.Operation.Status.DONE:
                op.message.end_time = "2026-12-01T07:05:00.000000Z"
                if op.error is not None:
                    code, text = op.error
                    op.message.error = {"code": code, "message": text}
                    op.message.status_message = text
                elif op.on_done is not None:
                    op.on_done()
        return op.message


def parse(message_type: Any, body: dict[str, Any]) -> Any:
    """`body` as a `message_type`, refused with the API's wording for unknown fields."""
    message = message_type.pb(message_type())
    try:
        json_format.ParseDict(body, message)
    except json_format.ParseError as exc:
        raise ApiError(400, f"Invalid JSON payload received. {exc}") from None
    return message_type.wrap(message)


def dump(message: Any, ints: bool) -> dict[str, Any]:
    """`message` as the API's JSON; enums as numbers when the client asked for them."""
    out: dict[str, Any] = json_format.MessageToDict(
        type(message).pb(message), use_integers_for_enums=ints
    )
    return out
