"""`logs(by_time=True)` on the local backend: the supervisor's pump stamps each line as it
reads it (a clock given here), keeps the plain logs as the processes wrote them, and the
reader merges every slot's lines in the order they were read, ties in slot order."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from gkeml_sdk.backends.local.runs.log_readers import SlotLogs, TimedLogs
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.supervision.log_pump import LogPump, _Stream
from gkeml_sdk.runs.log_lines import UNTIMED, log_slot, log_time, split_kube_time

T0 = 1_765_137_205_000_000_000  # 2025-12-07T19:53:25Z


def _run(tmp_path: Path) -> RunDir:
    run = RunDir(tmp_path / "run")
    Path(run.logs).mkdir(parents=True)
    return run


def _clock(*ticks: int) -> Iterator[int]:
    return iter(T0 + tick for tick in ticks)


def _stream(run: RunDir, slot: str) -> _Stream:
    return _Stream(slot, os.open(run.log_path(slot), os.O_WRONLY | os.O_APPEND | os.O_CREAT))


def test_lines_are_merged_in_the_order_the_supervisor_read_them(tmp_path: Path) -> None:
    run = _run(tmp_path)
    ticks = _clock(30, 10, 20, 40)
    pump = LogPump(run, clock=lambda: next(ticks))
    one, zero = _stream(run, "1"), _stream(run, "0")
    # Read in this order, with these clock readings: the merge follows the times, so rank 1's
    # first line (read at +10) comes before rank 0's (+20) though the index has it second.
    pump.take(zero, b"zero a\n")  # +30
    pump.take(one, b"one a\none b\n")  # +10: one read, one time for both lines
    pump.take(zero, b"zero b\n")  # +20
    pump.take(one, b"one c\n")  # +40
    assert list(TimedLogs(run).read()) == [
        f"{log_time(T0 + 10)} [1] one a",
        f"{log_time(T0 + 10)} [1] one b",
        f"{log_time(T0 + 20)} [0] zero b",
        f"{log_time(T0 + 30)} [0] zero a",
        f"{log_time(T0 + 40)} [1] one c",
    ]
    # The plain logs and what logs() shows are what the processes wrote.
    assert Path(run.log_path("0")).read_bytes() == b"zero a\nzero b\n"
    assert SlotLogs(run).read() == ["[0] zero a", "[0] zero b", "[1] one a", "[1] one b",
                                    "[1] one c"]  # fmt: skip


def test_lines_of_one_time_are_in_slot_order_not_text_order(tmp_path: Path) -> None:
    run = _run(tmp_path)
    pump = LogPump(run, clock=lambda: T0)  # every read at the same nanosecond
    for slot in ("10", "2", "0.10", "0.3"):
        pump.take(_stream(run, slot), f"from {slot}\n".encode())
    assert [log_slot(line) for line in TimedLogs(run).read()] == ["0.3", "0.10", "2", "10"]


def test_a_line_written_in_pieces_gets_one_record_at_its_end(tmp_path: Path) -> None:
    run = _run(tmp_path)
    ticks = _clock(1, 2, 3)
    pump = LogPump(run, clock=lambda: next(ticks))
    zero = _stream(run, "0")
    pump.take(zero, b"first\nsec")  # +1: ends "first", starts "second"
    reader = TimedLogs(run)
    assert reader.read() == [f"{log_time(T0 + 1)} [0] first"]
    pump.take(zero, b"ond")  # +2: no line ends, no record
    assert reader.read() == []
    pump.take(zero, b"\nthird\n")  # +3
    assert reader.read() == [f"{log_time(T0 + 3)} [0] second", f"{log_time(T0 + 3)} [0] third"]
    assert Path(run.times_path).read_text().splitlines() == [
        f"{log_time(T0 + 1)} 0 0",
        f"{log_time(T0 + 3)} 0 6",
        f"{log_time(T0 + 3)} 0 13",
    ]


def test_a_process_that_ends_mid_line_has_its_line_ended_and_recorded(tmp_path: Path) -> None:
    run = _run(tmp_path)
    ticks = _clock(1, 2, 3)
    pump = LogPump(run, clock=lambda: next(ticks))
    fd = pump.open("0")
    os.write(fd, b"done\nhalf")
    os.close(fd)  # the process ends: the pipe ends
    pump.join("0")
    fd = pump.open("0")  # the next attempt starts on a line of its own
    os.write(fd, b"again\n")
    os.close(fd)
    pump.join("0")
    assert Path(run.log_path("0")).read_bytes() == b"done\nhalf\nagain\n"
    lines = TimedLogs(run).read()
    assert [line.split(" ", 1)[1] for line in lines] == ["[0] done", "[0] half", "[0] again"]


def test_the_slot_filter_and_lines_without_a_record(tmp_path: Path) -> None:
    run = _run(tmp_path)
    pump = LogPump(run, clock=lambda: T0)
    pump.take(_stream(run, "0"), b"timed\n")
    pump.take(_stream(run, "1"), b"other\n")
    # A line the index does not cover (a run logged before gkeml recorded times).
    with open(run.log_path("0"), "ab") as log:
        log.write(b"untimed\n")
    reader = TimedLogs(run, slot="0")
    assert reader.read() == [f"{log_time(T0)} [0] timed"]
    assert reader.rest() == [f"{UNTIMED} [0] untimed"]
    assert log_slot(reader.rest()[0]) == "0"  # `--rank` finds the slot after the blank time


def test_a_log_that_cannot_be_written_never_blocks_the_process(tmp_path: Path) -> None:
    run = _run(tmp_path)
    pump = LogPump(run, clock=lambda: T0)
    broken = _Stream("0", os.open(os.devnull, os.O_RDONLY))  # every write fails, as on ENOSPC
    pump.take(broken, b"lost\n")  # returns: the pipe keeps being drained
    assert not Path(run.times_path).exists()


def test_kubelet_times_are_read_in_every_zone_and_precision() -> None:
    assert split_kube_time("2025-12-07T19:53:25.000000001Z a b") == (T0 + 1, "a b")
    assert split_kube_time("2025-12-07T19:53:25Z x") == (T0, "x")
    assert split_kube_time("2025-12-07T14:53:25.5-05:00 x") == (T0 + 500_000_000, "x")
    assert split_kube_time("no time here") is None
