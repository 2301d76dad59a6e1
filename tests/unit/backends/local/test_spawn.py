"""`start_in_group` starts a process as the supervisor's `subprocess.Popen` call did: its own
session, the given umask, stdin from /dev/null, output to the log, default signal dispositions,
and the exec error raised in the supervisor."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from gkeml_sdk.backends.local.system.spawn import start_in_group


def _log(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "0.log"
    return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_process_leads_its_session_with_the_umask_and_no_stdin(tmp_path: Path) -> None:
    path, fd = _log(tmp_path)
    # Field 6 of /proc/PID/stat is the session id (the command name "(sh)" holds no space).
    script = "umask; grep SigIgn /proc/$$/status; cut -d' ' -f6 /proc/$$/stat; echo $$; cat"
    script += "; echo end"
    child = start_in_group(["sh", "-c", script], cwd=tmp_path, env=dict(os.environ),
                           log_fd=fd, umask=0o027)  # fmt: skip
    assert child.wait() == 0 and child.poll() == 0
    umask, ignored, sid, pid, end = path.read_text().split("\n")[:5]
    assert int(umask, 8) == 0o027
    assert int(sid) == int(pid) == child.pid  # its own session (and so its own group)
    mask = int(ignored.split()[1], 16)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # ignored by Python, not by the user's code
        assert not mask & (1 << (sig - 1))
    assert end == "end"  # stdin was /dev/null: `cat` read nothing and did not wait


def test_a_command_that_cannot_be_executed_raises_in_the_caller(tmp_path: Path) -> None:
    _, fd = _log(tmp_path)
    with pytest.raises(FileNotFoundError) as raised:
        start_in_group(["no-such-program-here"], cwd=tmp_path, env={"PATH": str(tmp_path)},
                       log_fd=fd, umask=-1)  # fmt: skip
    assert raised.value.strerror == os.strerror(2)
    assert raised.value.filename == "no-such-program-here"
    with pytest.raises(OSError):
        os.fstat(fd)  # closed: the log belongs to the process that never started


def test_a_working_directory_that_is_missing_is_named(tmp_path: Path) -> None:
    _, fd = _log(tmp_path)
    with pytest.raises(FileNotFoundError) as raised:
        start_in_group(["true"], cwd=tmp_path / "gone", env={}, log_fd=fd, umask=-1)
    assert raised.value.filename == str(tmp_path / "gone")


def test_an_exit_by_signal_reads_as_a_negative_code(tmp_path: Path) -> None:
    _, fd = _log(tmp_path)
    child = start_in_group(["sh", "-c", "kill -KILL $$"], cwd=tmp_path, env=dict(os.environ),
                           log_fd=fd, umask=-1)  # fmt: skip
    assert child.wait() == -signal.SIGKILL
