"""`logs(by_time=True)` and `gkeml logs --by-time` of a real local run: the ranks take turns
(each waits until the supervisor recorded the other's line), so the order of their lines is
known without any timing, and it is not the slot order `logs()` keeps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gkeml_sdk import Client, LocalSettings, RunState, TrainingJob
from gkeml_sdk.backends.local import LocalBackend
from gkeml_sdk.cli.main import main

# Rank 1 speaks first, then rank 0, then rank 1; each line is said once the one before it is
# in the supervisor's index, so its time is later.
TURNS = """
import os, pathlib, time
rank = int(os.environ["NODE_RANK"])
times = pathlib.Path(os.environ["GKEML_CHECKPOINT_DIR"]).parent / "logs" / "times"

def recorded(n):
    while n and (not times.exists() or len(times.read_text().splitlines()) < n):
        time.sleep(0.01)

for turn, (who, text) in enumerate([(1, "one"), (0, "two"), (1, "three")]):
    if who == rank:
        recorded(turn)
        print(f"{text} from {rank}")
recorded(3)
"""
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z"


def test_a_local_run_s_lines_merge_in_the_order_the_ranks_wrote_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    client = Client(local=LocalSettings(run_dir=tmp_path))
    run = client.submit(TrainingJob(name="turns", nodes=2, command=["python", "-c", TURNS]))
    try:
        assert run.wait(timeout=120).state is RunState.SUCCEEDED
    finally:
        run.cancel()  # stops a run that did not end: nothing is left running
    assert list(run.logs()) == ["[0] two from 0", "[1] one from 1", "[1] three from 1"]
    merged = list(run.logs(by_time=True))
    assert [line.split(" ", 1)[1] for line in merged] == [
        "[1] one from 1",
        "[0] two from 0",
        "[1] three from 1",
    ]
    assert all(re.fullmatch(TIME, line.split(" ", 1)[0]) for line in merged), merged
    assert sorted(merged) == merged  # the times read in the order shown
    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path))
    capsys.readouterr()
    assert main(["logs", "turns", "--by-time", "--local"]) == 0
    assert capsys.readouterr().out.splitlines() == merged
    assert list(run.logs(follow=True, by_time=True)) == merged  # a finished run: at once
    # One process's lines: the local run service's own `slot=` (no pod has a slot).
    one = LocalBackend(run_dir=tmp_path).service.logs(run.ref, by_time=True, slot="1")
    assert [line.split(" ", 1)[1] for line in one] == [
        "[1] one from 1",
        "[1] three from 1",
    ]
