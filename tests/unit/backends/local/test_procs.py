"""Process identity and process-group stops against real processes."""

from __future__ import annotations

import os
import subprocess
import time

from gkeml_sdk.backends.local.procs import ProcessId, alive, free_ports, group_alive, stop_groups


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
