"""One raw HTTP request to a fake server, for tests that must see exact status and body."""

from __future__ import annotations

import http.client
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import KubeAPIServer


def send_text(
    server: KubeAPIServer,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    token: str = "",
    accept: str = "",
) -> tuple[int, str]:
    """(status, body text) of one request (e.g. a watch's NDJSON lines); with `token`, sent
    as `Authorization: Bearer <token>` (see `Rbac.add_token`); with `accept`, that `Accept`
    header."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": content_type} if data is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if accept:
            headers["Accept"] = accept
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read().decode()
    finally:
        conn.close()


def send(
    server: KubeAPIServer,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    token: str = "",
    accept: str = "",
) -> tuple[int, Any]:
    """(status, decoded JSON body, or the text if it is not JSON) of one request."""
    status, text = send_text(server, method, path, body, content_type, token, accept)
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text
