"""Local runs keep secrets and files private: a secret value reaches the processes but no
file of the run root, and every file and directory the SDK writes is owner-only whatever the
umask."""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gkeml_sdk import ConfigError, RunState, TrainingJob
from gkeml_sdk.backends.kubernetes.runs.run_record import RunRecord
from gkeml_sdk.backends.local import LocalBackend, LocalOptions
from tests.local_runs import checkpoints_of, submit

FAST = LocalOptions(grace_seconds=0.5)
VAR = "TEST_API_TOKEN"

# Fails its first attempt so the restart path hands the secret over too; prints only hashes.
USES_SECRET = f"""
import hashlib, os, sys
value = os.environ[{VAR!r}]
print("env", hashlib.sha256(value.encode()).hexdigest())
print("argv", "$(" in " ".join(sys.argv), hashlib.sha256(value.encode()).hexdigest() in sys.argv)
sys.exit(3 if os.environ["GKEML_RESTART_ATTEMPT"] == "0" else 0)
"""


def files_under(root: Path) -> Iterator[Path]:
    for folder, _, names in os.walk(root):
        for name in names:
            yield Path(folder) / name


def test_a_secret_value_reaches_the_processes_and_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = f"tok-{secrets.token_hex(16)}"
    monkeypatch.setenv(VAR, token)
    job = TrainingJob.from_code(
        USES_SECRET,
        name="secret",
        image="python:3.12",
        nodes=2,
        max_restarts=1,
        args=["--lr=$(LR)"],  # expanded as Kubernetes does; $(TEST_API_TOKEN) is refused
        env={"LR": "0.1"},
        secret_env={VAR: "test-secret/token"},
    )
    root = tmp_path / "runs"
    run = submit(LocalBackend(run_dir=root, options=FAST), job)
    monkeypatch.delenv(VAR)  # the run must not need it again: restarts use the supervisor's copy
    assert run.wait(timeout=60).state is RunState.SUCCEEDED
    assert run.attempt == 2
    digest = hashlib.sha256(token.encode()).hexdigest()
    # Rank 1 may be stopped by the gang restart before it prints, or halfway through a line
    # (a line of its own: the next attempt starts a new one); attempt 2 always prints.
    expected = {f"[{n}] env {digest}" for n in (0, 1)} | {f"[{n}] argv False False" for n in (0, 1)}
    shown = set(run.logs())
    assert expected <= shown
    assert all(any(line.startswith(cut) for line in expected) for cut in shown - expected)
    written = list(files_under(root))
    assert {p.name for p in written} >= {
        "job.yaml", "launch.json", "state.json", "supervisor.json", "supervisor.log", "main.py",
        "0.log", "1.log",
    }  # fmt: skip
    leaks = [p for p in written if token.encode() in p.read_bytes()]
    assert leaks == []
    assert "test-secret" in (run.snapshot().path / "job.yaml").read_text()  # the reference is kept
    # Neither do the manifests nor the cluster run record of the same job hold it.
    compiled = job.compile()
    assert token not in compiled.to_yaml()
    assert token not in str(RunRecord(job=job, submitted_at=0.0).to_configmap())


def test_a_missing_secret_fails_the_submit_naming_it(tmp_path: Path) -> None:
    job = TrainingJob(
        name="nosecret", command=["python", "-c", "pass"], secret_env={VAR: "wandb/api-key"}
    )
    os.environ.pop(VAR, None)
    with pytest.raises(ConfigError, match=f"{VAR} \\(Secret wandb, key api-key\\)") as info:
        LocalBackend(run_dir=tmp_path / "runs").submit(job)
    assert f"export {VAR}=" in str(info.value)
    assert not (tmp_path / "runs").exists()  # nothing was written


WRITES_A_FILE = """
import os, pathlib, time
pathlib.Path(os.environ["GKEML_CHECKPOINT_DIR"], "user.bin").write_bytes(b"x")
print("ok")
time.sleep(float(os.environ.get("SLEEP", "0")))
"""


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_run_files_are_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    root = tmp_path / "home" / "runs"
    old = os.umask(umask)
    try:
        backend = LocalBackend(run_dir=root, options=FAST)
        files = {"pkg/util.py": "X = 1\n"}
        done = submit(backend, TrainingJob.from_code(WRITES_A_FILE, name="done", files=files))
        assert done.wait(timeout=60).state is RunState.SUCCEEDED
        slow = TrainingJob.from_code(WRITES_A_FILE, name="slow", env={"SLEEP": "30"}, nodes=2)
        cancelled = submit(backend, slow)
        deadline = time.monotonic() + 30
        while "[1] ok" not in list(cancelled.logs()):
            assert time.monotonic() < deadline, "the processes did not start"
            time.sleep(0.05)
        cancelled.cancel()
        assert cancelled.state.state is RunState.CANCELLED
    finally:
        os.umask(old)
    assert (cancelled.snapshot().path / "cancel").exists()
    user_files = {checkpoints_of(run) / "user.bin" for run in (done, cancelled)}
    modes = {}
    for folder, dirs, names in os.walk(tmp_path / "home"):
        for name in dirs:
            modes[Path(folder) / name] = stat.S_IMODE((Path(folder) / name).lstat().st_mode)
        for name in names:
            modes[Path(folder) / name] = stat.S_IMODE((Path(folder) / name).lstat().st_mode)
    code = {p for p in modes if "code" in p.relative_to(root).parts and p.is_file()}
    assert {p.name for p in code} == {"main.py", "util.py"}
    wrong = {
        str(p): oct(m)
        for p, m in modes.items()
        if p not in user_files and m != (0o700 if p.is_dir() else 0o400 if p in code else 0o600)
    }
    assert wrong == {}
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700  # created by the backend
    # User code creates files with the caller's umask, as it would outside gkeml.
    assert {modes[p] for p in user_files} == {0o666 & ~umask}
