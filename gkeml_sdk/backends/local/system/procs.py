"""POSIX process facts the local backend relies on: is a recorded process still the same
process, wait for one to exit, stop a whole process group, find free ports."""

from __future__ import annotations

# The C module under `socket`: its wrapper builds enums (AddressFamily...) at import, a cost
# on the supervisor's start that every run waits for, to name what two loopback binds need not.
import _socket
import contextlib
import os
import select
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

# How long a SIGKILLed group may take to disappear before `stop_groups` gives up waiting.
KILL_WAIT_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class ProcessId:
    """A pid plus its start time, so a reused pid is never mistaken for ours.

    `start` is the kernel's start time in clock ticks (`/proc/PID/stat`), 0 where /proc is
    missing (then only the pid is checked), or -1 for a process known to have exited.

    Example:
        >>> ProcessId.of(os.getpid()) == ProcessId(os.getpid(), start_time(os.getpid()) or 0)
        True
    """

    pid: int
    start: int = 0

    @classmethod
    def of(cls, pid: int) -> ProcessId:
        """The identity of `pid` now (start -1 when it already exited)."""
        start = start_time(pid)
        return cls(pid, -1 if start is None else start)


def start_time(pid: int) -> int | None:
    """Start time of `pid` in clock ticks since boot; None if it does not exist or is a
    zombie (a zombie has exited; only its exit status waits to be collected).

    Example:
        >>> start_time(os.getpid()) is not None
        True
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except FileNotFoundError:
        return None
    except OSError:
        return 0 if _exists(pid) else None
    # The command name is in parentheses and may contain spaces: split after the last ')'.
    fields = stat[stat.rindex(b")") + 2 :].split()
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


def alive(proc: ProcessId) -> bool:
    """True while `proc` runs (not exited, not a zombie, not a reused pid)."""
    if proc.start < 0:
        return False
    if not os.path.isdir("/proc"):
        return _exists(proc.pid)
    now = start_time(proc.pid)
    return now is not None and (proc.start == 0 or now == proc.start)


def wait_exit(proc: ProcessId, timeout: float) -> None:
    """Sleep `timeout` seconds, or less if `proc` exits first (it need not be our child). Where
    Linux's pidfd is missing this is a plain sleep.

    Example:
        >>> wait_exit(ProcessId(os.getpid(), -1), 60.0)  # a process known to have exited
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        if alive(proc):
            time.sleep(timeout)
        return
    try:
        # Checked after opening: the descriptor now names this pid, so a reused one is seen.
        if alive(proc):
            select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def signal_group(leader: ProcessId, sig: int) -> None:
    """Send `sig` to the process group `leader` created (it leads its own group).

    When the leader has exited, its group may still hold children; the pid cannot have been
    reused while that group exists, so the group is signalled. When the pid belongs to a
    different, newer process, the group is gone and nothing is sent.
    """
    if leader.pid <= 0:  # never a real group here; killpg(0) would signal our own group
        return
    now = start_time(leader.pid)
    if now is not None and leader.start != 0 and now != leader.start:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader.pid, sig)


def group_alive(leader: ProcessId) -> bool:
    """True while any process of the leader's group exists."""
    if leader.pid <= 0:
        return False
    now = start_time(leader.pid)
    if now is not None and leader.start != 0 and now != leader.start:
        return False
    try:
        os.killpg(leader.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return _group_has_live_member(leader.pid)


def stop_groups(leaders: Iterable[ProcessId], grace: float, poll: float = 0.02) -> None:
    """SIGTERM every group, wait up to `grace` seconds, then SIGKILL what is left and wait until
    it is gone (at most `KILL_WAIT_SECONDS`)."""
    pending = [p for p in leaders if group_alive(p)]
    for leader in pending:
        signal_group(leader, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pending and time.monotonic() < deadline:
        time.sleep(poll)
        pending = [p for p in pending if group_alive(p)]
    for leader in pending:
        signal_group(leader, signal.SIGKILL)
    # SIGKILL lands asynchronously; a caller that starts the next attempt right after must not
    # meet processes of this one, so wait (boundedly) until they are gone.
    deadline = time.monotonic() + KILL_WAIT_SECONDS
    while pending and time.monotonic() < deadline:
        pending = [p for p in pending if group_alive(p)]
        if pending:
            time.sleep(poll)


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports that are free on the loopback interface right now.

    Example:
        >>> a, b = free_ports(2)
        >>> a != b
        True
    """
    sockets = []
    try:
        for _ in range(count):
            sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_has_live_member(pgid: int) -> bool:
    # killpg(0) also succeeds for a group of zombies; with /proc, look for a live member.
    if not os.path.isdir("/proc"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False
