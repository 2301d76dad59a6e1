"""Issue 25 item 5: what the local backend adds to a trivial 2-process job. Wall time from
`submit` to `wait()` returning of a 2-node `python -c pass` job, against the same two
processes started with `subprocess.Popen` and waited; the median of several runs of each,
interleaved, as a ratio measured in one run. gkeml's modules are byte-compiled first, as an
installed wheel's are. CPU is the processor time (user + system) of
this process and of every process it started, the detached supervisor included.

    python tests/bench/scale_local.py [--runs 9]

Linux only: this process becomes a child subreaper, so the supervisor, which its launcher
detaches, is reparented here when the launcher exits, and waiting for it adds its CPU (and that
of the processes it waited for) to ours.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import ctypes
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import gkeml_sdk
from gkeml_sdk import TrainingJob
from gkeml_sdk.backends.local import LocalBackend
from gkeml_sdk.backends.local.store.run_store import RunDir
from tests.bench.scale_rows import ScaleRow

GOAL = 2.0
RANK = [sys.executable, "-c", "pass"]
_PR_SET_CHILD_SUBREAPER = 36


def rows(runs: int = 9) -> list[ScaleRow]:
    """The wall and CPU ratios of a trivial 2-process local job to `subprocess`, measured now."""
    local, plain = _measure(runs)
    wall = statistics.median(w for w, _ in local) / statistics.median(w for w, _ in plain)
    cpu = statistics.median(c for _, c in local) / statistics.median(c for _, c in plain)
    return [
        ScaleRow(
            "local backend, 2-process `python -c pass` job: wall, submit to wait() done",
            f"{wall:.2f}x subprocess ({_ms(local, 0)} against {_ms(plain, 0)}, median of {runs})",
            f"<= {GOAL:g}x",
            wall <= GOAL,
        ),
        ScaleRow(
            "local backend, same job: CPU of this process and every process it started",
            f"{cpu:.2f}x subprocess ({_ms(local, 1)} against {_ms(plain, 1)}, median of {runs})",
            f"<= {GOAL:g}x (the wall goal; the issue sets none for CPU)",
            cpu <= GOAL,
        ),
    ]


def _measure(runs: int) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    # As an installed wheel is (PYTHONDONTWRITEBYTECODE would make every start compile them).
    compileall.compile_dir(Path(gkeml_sdk.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as root, _subreaper():
        backend = LocalBackend(run_dir=root)
        jobs = [
            TrainingJob(name=f"bench-{i}", command=["python", "-c", "pass"], nodes=2)
            for i in range(runs + 1)
        ]
        _local_once(backend, jobs[0])  # warm-up: byte-compiled modules, a warm page cache
        _plain_once()
        local: list[tuple[float, float]] = []
        plain: list[tuple[float, float]] = []
        for job in jobs[1:]:
            local.append(_timed(lambda job=job: _local_once(backend, job)))
            plain.append(_timed(_plain_once))
        return local, plain


def _local_once(backend: LocalBackend, job: TrainingJob) -> None:
    snap = backend.submit(job)
    state = backend.service.wait([snap.ref], timeout=120)[0].state
    if state.value != "Succeeded":
        raise RuntimeError(f"the bench job ended {state}: {list(backend.service.logs(snap.ref))}")
    assert snap.path is not None
    supervisor = RunDir(snap.path).read_supervisor()
    assert supervisor is not None
    # Reparented here when its launcher exited; waiting adds its CPU to RUSAGE_CHILDREN.
    os.waitpid(supervisor.pid, 0)


def _plain_once() -> None:
    procs = [subprocess.Popen(RANK, stdin=subprocess.DEVNULL) for _ in range(2)]
    for proc in procs:
        if proc.wait() != 0:
            raise RuntimeError(f"{RANK} exited {proc.returncode}")


def _timed(work: Callable[[], None]) -> tuple[float, float]:
    cpu_before = _cpu()
    start = time.perf_counter()
    work()
    wall = time.perf_counter() - start
    return wall, _cpu() - cpu_before


def _cpu() -> float:
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


@contextlib.contextmanager
def _subreaper() -> Iterator[None]:
    if not sys.platform.startswith("linux"):
        raise SystemExit("scale_local.py needs Linux (a child subreaper counts the supervisor)")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    try:
        yield
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 0)


def _ms(samples: list[tuple[float, float]], index: int) -> str:
    return f"{statistics.median(s[index] for s in samples) * 1000:.0f} ms"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    for row in rows(parser.parse_args().runs):
        print(row.line())
