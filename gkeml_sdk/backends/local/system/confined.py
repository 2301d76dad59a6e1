"""The file system side of the local run store: run paths that stay under the root whatever
names they are given, private files and directories whatever the umask, and deletion that
never follows a symbolic link out of the root."""

from __future__ import annotations

import os
import re
import stat
from typing import TYPE_CHECKING

from gkeml_sdk.errors import ConfigError, SpecError

if TYPE_CHECKING:
    from pathlib import Path

# Namespaces and run names become path components; Kubernetes names (DNS-1123 labels) can
# never be '.', '..', absolute, or hold '/', NUL or a newline.
STORE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
MAX_STORE_NAME = 63
DIR_MODE = 0o700
FILE_MODE = 0o600
READ_ONLY_MODE = 0o400  # code files, read-only as the ConfigMap mount is on GKE


def check_store_name(kind: str, value: str) -> None:
    """Raise `SpecError` unless `value` is a name the store may use as a path component.

    Example:
        >>> check_store_name("name", "llama-ft")
        >>> check_store_name("namespace", "../victim")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: local run namespace '../victim' is not a valid name ...
    """
    if isinstance(value, str) and len(value) <= MAX_STORE_NAME and STORE_NAME.fullmatch(value):
        return
    suggestion = re.sub(r"[^a-z0-9-]+", "-", str(value).lower()).strip("-")[:MAX_STORE_NAME]
    raise SpecError(
        f"local run {kind} {value!r} is not a valid name",
        rule="run names and namespaces are Kubernetes names (lower-case letters, digits and "
        f"'-', starting and ending alphanumeric, at most {MAX_STORE_NAME} characters); they "
        "name directories under the run root and can never point outside it",
        fix=f"{kind}={suggestion or 'default'!r}",
        field=kind,
    )


def run_path(root: Path, namespace: str, name: str) -> Path:
    """`<root>/<namespace>/<name>`, after checking both names and that no link leads the path
    out of the root.

    Example:
        >>> from pathlib import Path
        >>> run_path(Path("/tmp/runs"), "default", "ft")
        PosixPath('/tmp/runs/default/ft')
    """
    check_store_name("namespace", namespace)
    check_store_name("name", name)
    path = root / namespace / name
    for part in (root / namespace, path):
        if part.is_symlink():
            raise _escape(part, "is a symbolic link")
    if not path.resolve().is_relative_to(root.resolve()):
        raise _escape(path, "resolves outside the run root")
    return path


def make_private_dir(path: Path) -> None:
    """Create `path` (and missing parents) readable by the owner only, whatever the umask.

    Example:
        >>> from pathlib import Path
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "a" / "b"
        >>> make_private_dir(target)
        >>> oct(target.stat().st_mode & 0o777), oct(target.parent.stat().st_mode & 0o777)
        ('0o700', '0o700')
    """
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=DIR_MODE, exist_ok=True)
    # `path` is ours even when it existed; existing parents (the run root's) stay as they were.
    for folder in {*missing, path}:
        os.chmod(folder, DIR_MODE, follow_symlinks=False)


def write_private(path: str | os.PathLike[str], text: str, mode: int = FILE_MODE) -> None:
    """Write `text` to a new or truncated file with `mode`, never through a link.

    Example:
        >>> from pathlib import Path
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "job.yaml"
        >>> write_private(target, "name: a\\n")
        >>> oct(target.stat().st_mode & 0o777)
        '0o600'
    """
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    if mode != FILE_MODE:
        os.chmod(path, mode, follow_symlinks=False)


def open_private(path: str | os.PathLike[str], flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """A file descriptor of `path`, created 0600 when missing (appending by default); a link
    in its place is refused (`OSError`).

    Example:
        >>> from pathlib import Path
        >>> import tempfile
        >>> fd = open_private(Path(tempfile.mkdtemp()) / "0.log")
        >>> oct(os.fstat(fd).st_mode & 0o777)
        '0o600'
        >>> os.close(fd)
    """
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return fd


def open_log_on_a_new_line(path: str | os.PathLike[str]) -> int:
    r"""`open_private(path)` for a process's output, after ending a line the previous attempt
    left unfinished (a process stopped mid-`print` under PYTHONUNBUFFERED): each attempt's
    output starts on a line of its own, as each container start has its own log on GKE.

    Example:
        >>> from pathlib import Path
        >>> import tempfile
        >>> log = Path(tempfile.mkdtemp()) / "0.log"
        >>> _ = log.write_bytes(b"[attempt 0] half")
        >>> os.close(open_log_on_a_new_line(log))
        >>> log.read_bytes()
        b'[attempt 0] half\n'
    """
    fd = open_private(path, os.O_RDWR | os.O_APPEND)
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")
    return fd


def remove_run_dir(root: Path, namespace: str, name: str) -> None:
    """Delete `<root>/<namespace>/<name>` without following any link below the root: a
    namespace or run directory replaced by a link raises `ConfigError` and nothing is deleted.

    Example:
        >>> from pathlib import Path
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> make_private_dir(root / "default" / "ft" / "logs")
        >>> remove_run_dir(root, "default", "ft")
        >>> (root / "default").exists(), (root / "default" / "ft").exists()
        (True, False)
    """
    run_path(root, namespace, name)
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            ns_fd = os.open(namespace, _NO_FOLLOW_DIR, dir_fd=root_fd)
        except OSError as exc:
            what = f"cannot be opened as a directory ({exc.strerror})"
            raise _escape(root / namespace, what) from None
        try:
            info = os.stat(name, dir_fd=ns_fd, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                raise _escape(root / namespace / name, "is not a directory")
            import shutil  # here: the supervisor, which imports this module, deletes nothing

            # With dir_fd, rmtree works on descriptors and never follows a link it meets.
            shutil.rmtree(name, dir_fd=ns_fd)
        finally:
            os.close(ns_fd)
    finally:
        os.close(root_fd)


_NO_FOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _escape(path: Path, what: str) -> ConfigError:
    return ConfigError(
        f"local run path {path} {what} (rule: the local run store only reads, writes and "
        "deletes real directories under its run root, never through a link). Try: remove "
        f"{path} by hand if it is not yours, or choose another run_dir"
    )
