"""A job's working directory packed for shipping: the same bytes for the same tree on any run
(sorted members, fixed mtimes, owners and modes, gzip without a timestamp), named by their
sha256, with `.gitignore` and `.gkemlignore` honoured and what cannot travel refused."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

from gkeml_sdk.core.model import fail

# Above this the tree belongs in an image or a volume: every start of every pod reads it.
WORKDIR_MAX_BYTES = 256 * 1024 * 1024
IGNORE_FILES = (".gitignore", ".gkemlignore")
ALWAYS_LEFT_OUT = (".git",)  # a repository's history is not its working tree
ARCHIVE_FOLDER = "gkeml-code"  # the folder of the code bucket holding the archives
_FILE_MODE, _EXEC_MODE = 0o644, 0o755


@dataclass(frozen=True, slots=True)
class PackedWorkdir:
    """A packed working directory.

    Attributes:
        data: The archive (a gzipped tar of the files, no directories).
        sha256: The archive's sha256, hex; it names the archive in the bucket.
        names: The files' paths in the archive, sorted.
        file_bytes: What the files hold, unpacked.
    """

    data: bytes
    sha256: str
    names: tuple[str, ...]
    file_bytes: int

    @property
    def object_name(self) -> str:
        """The archive's name under the code bucket's prefix.

        Example:
            >>> PackedWorkdir(b"", "ab" * 32, (), 0).object_name[:15]
            'gkeml-code/abab'
        """
        return f"{ARCHIVE_FOLDER}/{self.sha256}.tar.gz"


def pack_workdir(workdir: str | Path, limit: int = WORKDIR_MAX_BYTES) -> PackedWorkdir:
    """Pack `workdir` deterministically, or raise `SpecError` naming what cannot travel: a
    missing directory, a file, a symlink leaving the tree, a socket, FIFO or device, or
    files above `limit` bytes.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "train.py").write_text("print(1)")
        >>> _ = (root / ".gitignore").write_text("*.ckpt\\n")
        >>> _ = (root / "big.ckpt").write_bytes(b"0" * 100)
        >>> packed = pack_workdir(root)
        >>> packed.names, packed.sha256 == pack_workdir(root).sha256
        (('.gitignore', 'train.py'), True)
    """
    root = Path(workdir)
    if not root.exists():
        raise fail(
            f"workdir {str(workdir)!r} does not exist",
            rule="workdir= is a local directory whose files travel with the job",
            fix="pass the path of your project's folder, e.g. workdir='.'",
            field="workdir",
        )
    if not root.is_dir():
        raise fail(
            f"workdir {str(workdir)!r} is a file, not a directory",
            rule="workdir= ships a folder; its files keep their paths below it",
            fix=f"workdir={str(root.parent)!r}, with command=['python', {root.name!r}]",
            field="workdir",
        )
    real_root = root.resolve()
    members: list[tuple[str, Path]] = []
    _walk(real_root, real_root, "", [], members, {real_root})
    total = 0
    for name, path in members:
        total += path.stat().st_size
        if total > limit:
            raise fail(
                f"workdir {str(workdir)!r} holds more than {limit // 2**20} MiB of files "
                f"(reached at {name!r})",
                rule="the workdir is packed, uploaded and unpacked at every start of every "
                "pod; trees of this size belong in an image or a volume",
                fix="leave data, checkpoints and outputs out with a .gkemlignore (gitignore "
                "syntax), read data from a bucket or a volume (volumes=[GcsFuse(...)]), or "
                "bake large files into the image",
                field="workdir",
            )
    data = _archive(members)
    return PackedWorkdir(
        data, hashlib.sha256(data).hexdigest(), tuple(n for n, _ in members), total
    )


@dataclass(frozen=True, slots=True)
class _Pattern:
    base: str  # the folder of the ignore file, relative to the root ("" at the root)
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool  # matched against the path below `base`, else against the last segment


def _walk(
    real_root: Path,
    folder: Path,
    rel: str,
    patterns: list[_Pattern],
    out: list[tuple[str, Path]],
    seen: set[Path],
) -> None:
    patterns = patterns + [p for f in IGNORE_FILES for p in _read_ignore(folder / f, rel)]
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        name = f"{rel}{entry.name}"
        if entry.name in ALWAYS_LEFT_OUT:
            continue
        path = Path(entry.path)
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            target = path.resolve()
            if not target.is_relative_to(real_root):
                raise fail(
                    f"{name!r} in the workdir is a symlink to {str(target)!r}, outside it",
                    rule="only the workdir's own files travel with the job; a link out of it "
                    "would ship files from elsewhere on this machine",
                    fix="copy the file into the workdir, or list the link in .gkemlignore",
                    field="workdir",
                )
            if not target.exists():
                continue  # a dangling link ships nothing, as git keeps no target for it
            mode = os.stat(target).st_mode
            path = target
        is_dir = stat.S_ISDIR(mode)
        if _ignored(patterns, name, is_dir):
            continue
        if is_dir:
            if path in seen:
                continue  # a link to a folder already packed (or a loop): its files are in
            _walk(real_root, path, f"{name}/", patterns, out, seen | {path})
        elif stat.S_ISREG(mode):
            out.append((name, path))
        else:
            raise fail(
                f"{name!r} in the workdir is a {_kind(mode)}",
                rule="an archive carries files and folders only",
                fix=f"list {name!r} in .gkemlignore, or move it out of the workdir",
                field="workdir",
            )


def _kind(mode: int) -> str:
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    return "device file"


def _read_ignore(path: Path, base: str) -> list[_Pattern]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(
            f"cannot read {base}{path.name} in the workdir: {exc}",
            rule=f"{' and '.join(IGNORE_FILES)} say which files stay behind",
            fix="make it a readable UTF-8 text file",
            field="workdir",
        ) from None
    patterns = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line
        line = line[1:] if line.startswith("\\") else line  # \# and \! name such files
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        patterns.append(
            _Pattern(base, re.compile(_glob_regex(line.lstrip("/"))), negate, dir_only, anchored)
        )
    return patterns


def _glob_regex(glob: str) -> str:
    # gitignore globs: `*` and `?` stay within a segment, `**` crosses them.
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 1 :]:
            end = glob.index("]", i + 1)
            body = glob[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out) + r"\Z"


def _ignored(patterns: list[_Pattern], name: str, is_dir: bool) -> bool:
    # The last pattern that matches decides, as in git.
    ignored = False
    for p in patterns:
        if p.dir_only and not is_dir:
            continue
        if p.base and not name.startswith(p.base):
            continue
        below = name[len(p.base) :]
        subject = below if p.anchored else below.rsplit("/", 1)[-1]
        if p.regex.match(subject):
            ignored = not p.negate
    return ignored


def _archive(members: list[tuple[str, Path]]) -> bytes:
    buffer = io.BytesIO()
    # No name and mtime 0 in the gzip header: the same files give the same bytes.
    with (
        gzip.GzipFile(filename="", fileobj=buffer, mode="wb", mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, path in members:
            info = tarfile.TarInfo(name)
            info.size = path.stat().st_size
            info.mode = _EXEC_MODE if os.access(path, os.X_OK) else _FILE_MODE
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            with path.open("rb") as f:
                tar.addfile(info, f)
    return buffer.getvalue()
