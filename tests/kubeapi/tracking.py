"""Request log, connection/watch bookkeeping and wait helpers mixed into `KubeAPIServer`."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable

from .handler import RequestRecord


class Tracking:
    """State the HTTP handler reports into, and what tests assert on."""

    _lock: threading.Lock
    _connections: set[socket.socket]
    _watches: set[socket.socket]
    _peak_watches: int
    request_log: list[RequestRecord]

    @property
    def open_watches(self) -> int:
        with self._lock:
            return len(self._watches)

    @property
    def peak_watches(self) -> int:
        """The most watch connections open at once since start or `reset_peak_watches()`
        (counted as they open and close, so no peak is missed between two looks)."""
        with self._lock:
            return self._peak_watches

    def reset_peak_watches(self) -> None:
        with self._lock:
            self._peak_watches = len(self._watches)

    def count(
        self,
        method: str | None = None,
        path_re: str | None = None,
        status: int | None = None,
        watch: bool | None = None,
    ) -> int:
        regex = re.compile(path_re) if path_re else None
        with self._lock:
            records = list(self.request_log)
        return sum(
            1
            for r in records
            if (method is None or r.method == method.upper())
            and (regex is None or regex.search(r.path))
            and (status is None or r.status == status)
            and (watch is None or r.watch == watch)
        )

    def clear_request_log(self) -> None:
        with self._lock:
            self.request_log.clear()

    def wait_for(
        self,
        predicate: Callable[[], bool],
        timeout: float = 5.0,
        interval: float = 0.01,
        raise_on_timeout: bool = True,
    ) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            if predicate():
                return True
            if time.monotonic() >= deadline:
                if raise_on_timeout:
                    raise TimeoutError(f"condition not met within {timeout}s")
                return False
            time.sleep(interval)

    def wait_for_watches(self, n: int = 1, timeout: float = 5.0) -> None:
        self.wait_for(lambda: self.open_watches >= n, timeout)

    # ---- called by the handler ------------------------------------------------------------
    def log_request(self, record: RequestRecord) -> None:
        with self._lock:
            self.request_log.append(record)

    def track_connection(self, conn: socket.socket, opened: bool) -> None:
        with self._lock:
            if opened:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def watch_opened(self, conn: socket.socket) -> None:
        with self._lock:
            self._watches.add(conn)
            self._peak_watches = max(self._peak_watches, len(self._watches))

    def watch_closed(self, conn: socket.socket) -> None:
        with self._lock:
            self._watches.discard(conn)
