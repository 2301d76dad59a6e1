"""HTTP/1.1 plumbing: parse requests, inject faults, write JSON, chunked watch and log streams."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import struct
import time
import traceback
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from . import errors
from .calls import Reply
from .dispatch import LogRequest
from .faults import Fault, RequestInfo
from .objects import parse_bool
from .podlogs import render
from .watch import CUT, WatchStream

if TYPE_CHECKING:
    from .server import KubeAPIServer

_TERMINAL = ("Succeeded", "Failed")


@dataclass
class RequestRecord:
    method: str
    path: str
    query: dict[str, str]
    status: int | None = None  # None: no response was sent (reset, timeout, cut)
    fault: str | None = None
    watch: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    handled: bool = False  # a "slow-reply" answer was made and is being held back
    sent: int = 0  # bytes of the body answered (not of watch streams)


def _fault_reply(fault: Fault) -> Reply:
    if fault.kind == "429":
        err = errors.too_many_requests(fault.retry_after if fault.retry_after is not None else 1)
        return Reply(429, err.status(), err.headers)
    if fault.kind == "502":
        return Reply(
            502,
            "<html><body><h1>502 Bad Gateway</h1></body></html>",
            {"Content-Type": "text/html; charset=UTF-8"},
        )
    if fault.kind == "503":
        err = errors.ApiError(
            503, "ServiceUnavailable", "the server is currently unable to handle the request"
        )
        extra = {} if fault.retry_after is None else {"Retry-After": str(int(fault.retry_after))}
        return Reply(503, err.status(), extra)
    if fault.kind == "504":
        err = errors.ApiError(
            504,
            "Timeout",
            "the server was unable to return a response in the "
            "time allotted, but may still be processing the request",
        )
        return Reply(504, err.status())
    return Reply(500, errors.internal_error("injected fault").status())


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-kube-apiserver"
    kube: KubeAPIServer

    def setup(self) -> None:
        super().setup()
        # Without this, Nagle + delayed ACK add ~40 ms to every small response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.kube = self.server.kube  # type: ignore[attr-defined]
        self.kube.track_connection(self.connection, True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.kube.track_connection(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        return  # the request log replaces stderr noise

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    # ---- request flow ---------------------------------------------------------------------
    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        is_watch = parse_bool(query.get("watch")) or "/watch/" in url.path
        record = RequestRecord(
            self.command,
            url.path,
            query,
            watch=is_watch,
            headers={k.lower(): v for k, v in self.headers.items()},
        )
        self.kube.log_request(record)
        info = RequestInfo(self.command, url.path, query, is_watch, record.headers)
        fault = self.kube.faults.pick(info)
        record.fault = fault.kind if fault else None
        if fault is not None and self._pre_fault(fault, record):
            return
        cut_after = fault.after_events if fault and fault.kind == "cut-watch" else None
        try:
            self.kube.rbac.check(self.command, url.path, query, record.headers)
            result = self.kube.dispatcher.handle(
                self.command,
                url.path,
                query,
                body,
                self.headers.get("Content-Type") or "",
                self.headers.get("User-Agent") or "",
                cut_after,
                self.headers.get("Accept") or "",
            )
        except errors.ApiError as exc:
            result = Reply(exc.code, exc.status(), dict(exc.headers))
        except Exception as exc:  # a bug in the fake server: report it, and fail the request
            self.kube.internal_errors.append(traceback.format_exc())
            result = Reply(500, errors.internal_error(repr(exc)).status())
        if fault is not None and fault.kind == "reset-after-write":
            self._reset()
            return
        if fault is not None and fault.kind == "slow-reply" and isinstance(result, Reply):
            record.handled = True
            self.kube.stop_event.wait(fault.delay if fault.delay is not None else 1.0)
        if isinstance(result, WatchStream):
            self._stream_watch(result, record)
        elif isinstance(result, LogRequest):
            self._stream_log(result, record)
        else:
            self._send(result, record)

    def _pre_fault(self, fault: Fault, record: RequestRecord) -> bool:
        """Apply a fault that happens before processing; True if the request is finished."""
        if fault.kind in ("reset-after-write", "cut-watch", "slow-reply"):
            return False
        if fault.kind == "slow":
            self.kube.stop_event.wait(fault.delay if fault.delay is not None else 1.0)
            return False
        if fault.kind == "timeout":
            self.kube.stop_event.wait(fault.delay if fault.delay is not None else 30.0)
            self._reset()
            return True
        if fault.kind == "reset":
            self._reset()
            return True
        self._send(_fault_reply(fault), record)
        return True

    # ---- responses ------------------------------------------------------------------------
    def _headers(
        self, code: int, content_type: str, extra: dict[str, str], chunked: bool, length: int = 0
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Audit-Id", str(uuid.uuid4()))
        for k, v in extra.items():
            self.send_header(k, v)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _send(self, reply: Reply, record: RequestRecord) -> None:
        headers = dict(reply.headers)
        if isinstance(reply.body, str):
            data = reply.body.encode()
            ctype = headers.pop("Content-Type", "text/plain; charset=utf-8")
        else:
            data = json.dumps(reply.body, separators=(",", ":")).encode()
            ctype = headers.pop("Content-Type", "application/json")
        record.status, record.sent = reply.code, len(data)
        try:
            self._headers(reply.code, ctype, headers, False, len(data))
            self.wfile.write(data)
        except OSError:
            self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _reset(self) -> None:
        """Drop the TCP connection with RST and no response."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()  # release makefile()'s reference so close() really closes
            self.connection.close()
        except OSError:  # the client went away: this connection is done
            self.close_connection = True

    def _client_alive(self) -> bool:
        """False once the client closed its end (so abandoned streams end promptly)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return not readable or self.connection.recv(1, socket.MSG_PEEK) != b""
        except OSError:
            return False

    def _drop(self) -> None:
        """End the connection with FIN mid-response (no final chunk), like a cut proxy/LB."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _stream_watch(self, stream: WatchStream, record: RequestRecord) -> None:
        record.status = 200
        stream.opts.client_alive = self._client_alive
        self.kube.watch_opened(self.connection)
        try:
            self._headers(200, "application/json", {}, True)
            for event in stream.events():
                if event is CUT:
                    self._drop()
                    return
                self._chunk(json.dumps(event, separators=(",", ":")).encode() + b"\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away: this connection is done
            self.close_connection = True
        finally:
            self.kube.watch_closed(self.connection)

    def _stream_log(self, req: LogRequest, record: RequestRecord) -> None:
        logs = self.kube.pod_logs
        entries, closed = logs.read(req.namespace, req.pod, req.container)
        sent = len(entries)
        if req.tail_lines is not None:  # lines of the runtime's log file: its entries
            entries = entries[-req.tail_lines :] if req.tail_lines else []
        # kubelet counts the time prefixes in limitBytes too.
        text = render(entries, req.timestamps)
        if req.limit_bytes is not None:
            text = text.encode()[: req.limit_bytes].decode(errors="ignore")
        if not req.follow:
            self._send(Reply(200, text), record)
            return
        record.status = 200
        try:
            self._headers(200, "text/plain", {}, True)
            if text:
                self._chunk(text.encode())
            while True:
                # Decide "done" before reading, so text appended before the pod finished is sent.
                pod = self.kube.store.lookup("pods", req.namespace, req.pod)
                phase = ((pod or {}).get("status") or {}).get("phase")
                done = self.kube.stopping or pod is None or phase in _TERMINAL
                done = done or not self._client_alive()
                current, closed = logs.read(req.namespace, req.pod, req.container)
                if len(current) > sent:
                    self._chunk(render(current[sent:], req.timestamps).encode())
                    sent = len(current)
                if done or closed:
                    break
                logs.wait(0.2)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away: this connection is done
            self.close_connection = True
