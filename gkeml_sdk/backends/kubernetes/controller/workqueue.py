"""`RunQueue`: the run controller's bounded pool of workers, one run at a time per key, as
controller-runtime's workqueue: a key added while it is being worked on is worked on once more
afterwards (never twice at once), so one slow run holds one worker and delays no other."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor


class RunQueue:
    """Calls `work(key)` on one of `workers` threads for each key added.

    Example:
        >>> seen = []
        >>> queue = RunQueue(2, seen.append)
        >>> queue.add(("ml", "a"))
        >>> queue.join(), seen
        (True, [('ml', 'a')])
        >>> queue.close()
    """

    def __init__(self, workers: int, work: Callable[[Hashable], None]) -> None:
        self._work = work
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gkeml-run")
        self._lock = threading.Condition()
        self._busy: set[Hashable] = set()  # keys a worker has now
        self._dirty: set[Hashable] = set()  # keys added again while busy

    def add(self, key: Hashable) -> None:
        """Have `key` worked on soon (once more after the current turn, if it has one)."""
        with self._lock:
            if key in self._busy:
                self._dirty.add(key)
                return
            self._busy.add(key)
        self._pool.submit(self._turn, key)

    def busy(self, key: Hashable) -> bool:
        """True while `key` is queued or being worked on."""
        with self._lock:
            return key in self._busy

    def join(self, timeout: float | None = None) -> bool:
        """Wait until no key is queued or worked on; False when `timeout` passed first."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._busy, timeout)

    def close(self) -> None:
        """Stop taking keys; return once the turns under way are over."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            self._busy.clear()
            self._dirty.clear()
            self._lock.notify_all()

    def _turn(self, key: Hashable) -> None:
        try:
            self._work(key)
        finally:
            with self._lock:
                again = key in self._dirty
                self._dirty.discard(key)
                if not again:
                    self._busy.discard(key)
                    self._lock.notify_all()
            if again:
                try:
                    self._pool.submit(self._turn, key)
                except RuntimeError:  # closed meanwhile: the key is left for nobody
                    with self._lock:
                        self._busy.discard(key)
                        self._lock.notify_all()
