"""Process identity and process-group stops against real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from gkeml_sdk.backends.local.system.procs import (
    ProcessId,
    alive,
    free_ports,
    group_alive,
    stop_groups,
    wait_exit,
)


def test_exited_and_reused_pids_are_not_alive() -> None:
    proc = subprocess.Popen(["true"])
    me = ProcessId.of(proc.pid)
    proc.wait()
    assert not alive(me)
    assert alive(ProcessId.of(os.getpid()))
    assert not alive(ProcessId(os.getpid(), start=1))  # same pid, another start time
    assert not alive(ProcessId(os.getpid(), start=-1))


def test_stop_groups_takes_grandchildren_along() -> None:
    # The shell ignores SIGTERM, so the stop must escalate to SIGKILL after the grace.
    proc = subprocess.Popen(
        ["sh", "-c", "trap '' TERM; sleep 30 & echo $!; wait"],
        stdout=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    assert proc.stdout is not None
    grandchild = int(proc.stdout.readline())
    leader = ProcessId.of(proc.pid)
    assert group_alive(leader)
    started = time.monotonic()
    stop_groups([leader], grace=0.3)
    proc.wait(timeout=5)
    assert time.monotonic() - started < 5
    assert not alive(ProcessId(grandchild))
    assert not group_alive(leader)


def test_free_ports_are_distinct() -> None:
    ports = free_ports(3)
    assert len(set(ports)) == 3


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="a plain sleep without Linux's pidfd")
def test_wait_exit_returns_when_the_process_exits_not_at_its_timeout() -> None:
    # The process exits when its stdin closes; the wait's timeout is far beyond the join's.
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)  # fmt: skip
    assert proc.stdin is not None
    waiter = threading.Thread(target=wait_exit, args=(ProcessId.of(proc.pid), 600.0))
    waiter.start()
    waiter.join(timeout=0.2)
    assert waiter.is_alive()  # still waiting while the process runs
    proc.stdin.close()
    waiter.join(timeout=60)
    assert not waiter.is_alive()
    proc.wait()


def test_wait_exit_of_a_gone_or_reused_pid_returns_at_once() -> None:
    proc = subprocess.Popen(["true"])
    me = ProcessId.of(proc.pid)
    proc.wait()
    for gone in (me, ProcessId(os.getpid(), start=1)):  # exited; a pid now naming another
        waiter = threading.Thread(target=wait_exit, args=(gone, 600.0))
        waiter.start()
        waiter.join(timeout=60)
        assert not waiter.is_alive()
