"""A loopback Cloud Storage for tests: gcp-storage-emulator's request handler in memory, with
every request counted by method and kind, and buckets whose writes it refuses as Cloud Storage
does for credentials without storage.objects.create (403, its JSON error body)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import ThreadingHTTPServer

from gcp_storage_emulator.handlers.buckets import create_bucket
from gcp_storage_emulator.server import RequestHandler
from gcp_storage_emulator.storage import Storage


@dataclass
class CloudStorage:
    """The emulator's address, what it was asked, and the buckets it refuses writes to."""

    url: str
    requests: Counter[str] = field(default_factory=Counter)
    read_only_buckets: set[str] = field(default_factory=set)

    @property
    def uploads(self) -> int:
        return self.requests["upload"]


class _Counting(RequestHandler):
    state: CloudStorage

    def do_POST(self) -> None:  # the name http.server calls
        if self.path.startswith("/upload/"):
            self.state.requests["upload"] += 1
            bucket = self.path.split("/b/", 1)[1].split("/", 1)[0]
            if bucket in self.state.read_only_buckets:
                self._forbidden(bucket)
                return
        else:
            self.state.requests["POST"] += 1
        super().do_POST()

    def do_GET(self) -> None:
        self.state.requests["GET"] += 1
        super().do_GET()

    def _forbidden(self, bucket: str) -> None:
        message = (
            "anonymous caller does not have storage.objects.create access to the Google "
            "Cloud Storage object. Permission 'storage.objects.create' denied on resource "
            "(or it may not exist)."
        )
        body = json.dumps(
            {"error": {"code": 403, "message": message, "errors": [
                {"message": message, "domain": "global", "reason": "forbidden"}]}}
        ).encode()  # fmt: skip
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(403)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def cloud_storage(*buckets: str) -> Iterator[CloudStorage]:
    """An emulator on 127.0.0.1 holding `buckets`, stopped on exit."""
    storage = Storage(use_memory_fs=True)
    for name in buckets:
        create_bucket(name, storage)
    handler = type("Handler", (_Counting,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, storage))
    handler.state = CloudStorage(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield handler.state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
