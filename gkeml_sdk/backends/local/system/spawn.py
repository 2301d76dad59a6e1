"""Start a local run's process as `subprocess.Popen` would (a session of its own, the
caller's umask, stdin from /dev/null, output appended to its log, the exec error raised
here) and make it die with the supervisor, without importing `subprocess` into the
supervisor, whose start is on every run's critical path."""

from __future__ import annotations

import functools
import os
import signal
import sys
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

# Signals Python ignores that an exec would leave ignored (`Popen(restore_signals=True)`).
_RESTORED_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)
_PR_SET_PDEATHSIG = 1


class Child:
    """A process `start_in_group` started: its pid and, once collected, its exit code
    (negative: the signal that killed it), as `Popen.returncode` reads.

    Example:
        >>> child = start_in_group(["true"], cwd=".", env={}, log_fd=os.open(os.devnull,
        ...                        os.O_WRONLY), umask=-1)
        >>> child.wait(), child.poll()
        (0, 0)
    """

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid: Final = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit code if the process exited (collecting it), else None."""
        if self.returncode is None:
            self._collect(os.WNOHANG)
        return self.returncode

    def wait(self) -> int:
        """Block until the process exits; its exit code."""
        while self.returncode is None:
            self._collect(0)
        return self.returncode

    def _collect(self, options: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, options)
        except ChildProcessError:  # collected elsewhere; Popen reads that as 0 too
            self.returncode = 0
            return
        if pid == self.pid:
            self.returncode = os.waitstatus_to_exitcode(status)


def start_in_group(
    argv: list[str], *, cwd: Path | str, env: dict[str, str], log_fd: int, umask: int
) -> Child:
    """Start `argv` (looked up on the PATH of `env`) in its own session and process group
    (stopping the group stops its children), with `umask` (-1: this process's), output
    appended to the open file `log_fd` (closed here), killed if this process dies. Raises
    `OSError` (with the failing path) when `argv` cannot be started or `cwd` entered."""
    die_with_parent = _death_signal()
    report_read, report_write = os.pipe()  # close-on-exec: EOF once the exec succeeded
    try:
        pid = os.fork()
    except OSError:
        for fd in (report_read, report_write, log_fd):
            os.close(fd)
        raise
    if pid == 0:  # pragma: no cover - the child execs or exits here
        _exec_child(argv, cwd, env, log_fd, umask, die_with_parent, report_write)
    os.close(report_write)
    os.close(log_fd)
    with open(report_read, "rb") as report:
        failure = report.read()
    if not failure:
        return Child(pid)
    os.waitpid(pid, 0)
    code, _, where = failure.decode(errors="replace").partition(" ")
    raise OSError(int(code), os.strerror(int(code)), where)


def _exec_child(
    argv: list[str],
    cwd: Path | str,
    env: dict[str, str],
    log_fd: int,
    umask: int,
    die_with_parent: Callable[[], None] | None,
    report_fd: int,
) -> None:
    where = str(cwd)
    try:
        os.setsid()
        if umask >= 0:
            os.umask(umask)
        os.chdir(cwd)
        where = argv[0]
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        for sig in _RESTORED_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        if die_with_parent is not None:
            die_with_parent()
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        os.write(report_fd, f"{exc.errno} {where}".encode())
    finally:
        os._exit(127)


@functools.cache
def _death_signal() -> Callable[[], None] | None:
    """What the child calls between fork and exec so that it gets SIGTERM if the supervisor
    dies (Linux only), and a killed supervisor leaves no training running unwatched. Looked
    up once in the supervisor, not imported again in every child before its exec."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return None

    def die_with_parent() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return die_with_parent
