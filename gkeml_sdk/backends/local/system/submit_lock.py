"""One submission per run name at a time, across processes: an exclusive `flock` on a file
beside the run directory, held from the first check of the name until the supervisor is
recorded. The kernel drops the lock when its holder dies, so a killed submitter never blocks
the name, and a reader can tell an abandoned submission from one still going on."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from gkeml_sdk.backends.local.system.confined import FILE_MODE, make_private_dir
from gkeml_sdk.errors import ConfigError


def lock_path(run_path: Path) -> Path:
    """The lock file of the run directory `run_path` (beside it: it outlives a replacement,
    and its leading dot is no store name, so listings skip it).

    Example:
        >>> lock_path(Path("/runs/default/train")).name
        '.train.submit.lock'
    """
    return run_path.parent / f".{run_path.name}.submit.lock"


@contextlib.contextmanager
def submission(run_path: Path) -> Iterator[None]:
    """Hold the run name's submission lock; waits while another process holds it (its launch
    is bounded), after which the caller sees that process's run as it left it."""
    make_private_dir(run_path.parent)
    fd = _open(lock_path(run_path))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def submission_in_progress(run_path: Path) -> bool:
    """True while a live process holds the run name's submission lock.

    Example:
        >>> submission_in_progress(Path("/nonexistent/default/train"))
        False
    """
    path = lock_path(run_path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False  # no lock file: nobody ever submitted through it
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return True
        raise
    finally:
        os.close(fd)
    return False


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except OSError as exc:
        raise ConfigError(
            f"cannot open the submission lock {path}: {exc.strerror}; check that the run "
            "directory is writable by you and is not a link"
        ) from None
