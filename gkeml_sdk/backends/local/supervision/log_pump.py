"""The supervisor's side of a local run's logs: each process writes into a pipe, and a thread
per pipe copies the output unchanged to the process's `logs/<slot>.log` and records when each
line arrived in `logs/times` (`RunDir.times_path`), one record a line: `<RFC 3339 time>
<slot> <byte offset of the line in its log>`. Records are appended under one lock in the
order the lines arrived, so the index is the run's output in time order (`logs(by_time=True)`
reads it: `log_readers`)."""

from __future__ import annotations

import _thread
import contextlib
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.confined import open_log_on_a_new_line, open_private
from gkeml_sdk.runs.log_lines import log_time

if TYPE_CHECKING:
    from collections.abc import Callable

# How long the end of a process waits for the rest of its output: longer only when a process
# it started left its session and holds the pipe open.
DRAIN_SECONDS = 5.0
_CHUNK = 65536


@dataclass
class _Stream:
    """One process's output on its way to its log."""

    slot: str
    log_fd: int
    line_start: int | None = None  # where the line not ended yet begins in the log, if any


class LogPump:
    """Copies each process's output to its log and records each line's time (module
    docstring); `clock` gives nanoseconds since the epoch.

    Example:
        >>> import tempfile
        >>> run = RunDir(tempfile.mkdtemp())
        >>> os.mkdir(run.logs)
        >>> ticks = iter([1_765_137_205_000_000_000, 1_765_137_206_000_000_000])
        >>> pump = LogPump(run, clock=lambda: next(ticks))
        >>> for slot in ("1", "0"):
        ...     fd = pump.open(slot)
        ...     _ = os.write(fd, b"up\\n"), os.close(fd), pump.join(slot)
        >>> print(open(run.times_path).read(), end="")
        2025-12-07T19:53:25.000000000Z 1 0
        2025-12-07T19:53:26.000000000Z 0 0
    """

    def __init__(self, run: RunDir, clock: Callable[[], int] = time.time_ns) -> None:
        self.run = run
        self.clock = clock
        # `_thread`, the documented low-level module `threading` is built on: the supervisor
        # starts the run's processes, and `threading`'s import would delay them.
        self._lock = _thread.allocate_lock()
        self._index: int | None = None
        self._running: dict[str, _thread.LockType] = {}  # held while a slot's copy runs

    def open(self, slot: str) -> int:
        """The write end of a new pipe whose reader copies into the log of `slot`: the
        process's stdout and stderr (`spawn.start_in_group` closes it). Raises `OSError`
        when the log cannot be opened."""
        stream = _Stream(slot, open_log_on_a_new_line(self.run.log_path(slot)))
        read, write = os.pipe()  # both close-on-exec: only the process gets the write end
        running = _thread.allocate_lock()
        running.acquire()
        self._running[slot] = running
        _thread.start_new_thread(self._copy, (read, stream, running))
        return write

    def note(self, slot: str, text: str) -> None:
        """Write a line of gkeml's own to the log of `slot` (a process that could not start)."""
        stream = _Stream(slot, open_private(self.run.log_path(slot)))
        try:
            self.take(stream, text.encode() + b"\n")
        finally:
            os.close(stream.log_fd)

    def join(self, slot: str, timeout: float = DRAIN_SECONDS) -> None:
        """Wait until the output of the process of `slot` is in its log (its pipe ended)."""
        running = self._running.get(slot)
        if running is not None and running.acquire(timeout=timeout):
            running.release()

    def take(self, stream: _Stream, data: bytes) -> None:
        """Append `data` read from `stream` to its log, and a record for each line it ends."""
        now = log_time(self.clock())
        with self._lock:
            try:
                base = os.lseek(stream.log_fd, 0, os.SEEK_END)
                _write_all(stream.log_fd, data)
            except OSError:
                return  # a full disk: the output is lost, and the process is not blocked
            records = []
            begin = 0
            while (end := data.find(b"\n", begin)) >= 0:
                start = base + begin if stream.line_start is None else stream.line_start
                records.append(f"{now} {stream.slot} {start}\n")
                stream.line_start = None
                begin = end + 1
            if begin < len(data) and stream.line_start is None:
                stream.line_start = base + begin
            if records:
                with contextlib.suppress(OSError):  # the log has the lines; only times are lost
                    _write_all(self._index_fd(), "".join(records).encode())

    def _copy(self, read: int, stream: _Stream, running: _thread.LockType) -> None:
        try:
            while data := os.read(read, _CHUNK):
                self.take(stream, data)
            if stream.line_start is not None:
                # A process stopped mid-line: end it, so that the next start's output, and
                # its record, begin on a line of their own.
                self.take(stream, b"\n")
        finally:
            os.close(read)
            os.close(stream.log_fd)
            running.release()

    def _index_fd(self) -> int:
        if self._index is None:
            self._index = open_private(self.run.times_path)
        return self._index


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
