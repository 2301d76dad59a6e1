"""Packing a workdir: the same tree gives the same bytes, ignore files are honoured, and what
cannot travel is refused before anything is uploaded."""

from __future__ import annotations

import io
import os
import socket
import tarfile
from pathlib import Path

import pytest

from gkeml_sdk import TrainingJob
from gkeml_sdk.errors import SpecError
from gkeml_sdk.training.workdir import pack_workdir
from gkeml_sdk.training.workdir_job import pack_job_workdir


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def members(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return tar.getmembers()


def test_the_same_files_pack_to_the_same_bytes_whatever_their_times_and_order(tmp_path):
    files = {"b.py": "b", "a/x.py": "x", "blob.bin": bytes(range(256))}
    first = pack_workdir(tree(tmp_path / "one", files))
    second_root = tree(tmp_path / "two", dict(reversed(files.items())))
    os.utime(second_root / "b.py", (1, 1))
    second = pack_workdir(second_root)
    assert first.data == second.data and first.sha256 == second.sha256
    assert first.names == ("a/x.py", "b.py", "blob.bin")
    for info in members(first.data):
        assert (info.mtime, info.uid, info.gid, info.uname, info.gname) == (0, 0, 0, "", "")
    (second_root / "b.py").write_text("changed")
    assert pack_workdir(second_root).sha256 != first.sha256


def test_gitignore_and_gkemlignore_leave_files_out_and_git_history_never_travels(tmp_path):
    root = tree(tmp_path, {
        ".gitignore": "*.ckpt\n/out/\n!keep.ckpt\n",
        ".gkemlignore": "data/**/*.npy\n",
        "keep.ckpt": "k", "model.ckpt": "m", "out/log.txt": "o", "src/out/ok.py": "ok",
        "data/a/b.npy": "n", "data/readme.md": "r", ".git/HEAD": "ref",
        "pkg/.gitignore": "local.py\n", "pkg/local.py": "l", "pkg/kept.py": "p",
    })  # fmt: skip
    assert pack_workdir(root).names == (
        ".gitignore", ".gkemlignore", "data/readme.md", "keep.ckpt", "pkg/.gitignore",
        "pkg/kept.py", "src/out/ok.py",
    )  # fmt: skip


def test_a_symlink_inside_the_tree_is_followed_and_one_leaving_it_is_refused(tmp_path):
    root = tree(tmp_path / "proj", {"real/config.yaml": "a: 1"})
    (root / "linked.yaml").symlink_to(root / "real" / "config.yaml")
    assert pack_workdir(root).names == ("linked.yaml", "real/config.yaml")
    secret = tree(tmp_path / "elsewhere", {"id_rsa": "key"})
    (root / "escape").symlink_to(secret / "id_rsa")
    with pytest.raises(SpecError, match=r"'escape' in the workdir is a symlink to .*outside it"):
        pack_workdir(root)


@pytest.mark.parametrize("kind", ["socket", "fifo"])
def test_a_socket_or_fifo_is_refused_by_name(tmp_path, kind):
    root = tree(tmp_path, {"train.py": ""})
    if kind == "fifo":
        os.mkfifo(root / "pipe")
        expected = "'pipe' in the workdir is a FIFO"
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(root / "pipe"))
        expected = "'pipe' in the workdir is a socket"
    with pytest.raises(SpecError, match=expected) as raised:
        pack_workdir(root)
    assert "list 'pipe' in .gkemlignore" in str(raised.value)


def test_a_missing_directory_a_file_and_a_tree_over_the_bound_are_refused(tmp_path):
    with pytest.raises(SpecError, match="does not exist"):
        pack_workdir(tmp_path / "nope")
    tree(tmp_path, {"train.py": "x" * 10, "weights.bin": b"0" * 100})
    with pytest.raises(SpecError, match="is a file, not a directory"):
        pack_workdir(tmp_path / "train.py")
    with pytest.raises(SpecError, match=r"more than 0 MiB of files \(reached at 'weights.bin'\)"):
        pack_workdir(tmp_path, limit=50)


def test_requirements_must_be_a_packed_file_of_requirements(tmp_path):
    root = tree(tmp_path, {
        "requirements.txt": "numpy==2.1.3  # pinned\n-r extra.txt\n--find-links ./wheels\n",
        "extra.txt": "six\n", "bad.txt": "numpy >>= 2\n", "missing.txt": "-r nowhere.txt\n",
        ".gkemlignore": "ignored.txt\n", "ignored.txt": "six\n",
    })  # fmt: skip

    def job(requirements: str) -> TrainingJob:
        return TrainingJob(name="a", command=["x"], workdir=str(root), requirements=requirements)

    assert "requirements.txt" in pack_job_workdir(job("requirements.txt")).names
    with pytest.raises(SpecError, match=r"bad.txt' line 1: 'numpy >>= 2' is not a requirement"):
        pack_job_workdir(job("bad.txt"))
    with pytest.raises(SpecError, match="names a file the workdir does not hold"):
        pack_job_workdir(job("missing.txt"))
    with pytest.raises(SpecError, match="is not a file of the workdir"):
        pack_job_workdir(job("ignored.txt"))
    with pytest.raises(SpecError, match="line 2: 'not a req' is not a requirement"):
        TrainingJob(name="a", command=["x"], requirements=["six", "not a req"])


def test_workdir_fields_that_do_not_fit_together_are_refused(tmp_path):
    with pytest.raises(SpecError, match="both workdir= and files="):
        TrainingJob(name="a", command=["x"], workdir=str(tmp_path), files={"m.py": ""})
    with pytest.raises(SpecError, match="code_bucket='gs://b' without workdir="):
        TrainingJob(name="a", command=["x"], code_bucket="gs://b")
    with pytest.raises(SpecError, match="code_bucket='s3://b' is not a Cloud Storage location"):
        TrainingJob(name="a", command=["x"], workdir=str(tmp_path), code_bucket="s3://b")
