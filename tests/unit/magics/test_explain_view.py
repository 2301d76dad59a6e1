"""The magics' views of explain and preview: advice in the magics' words, evidence folded in
HTML, and a `--wait` line that says why a waiting run waits without ever failing the wait."""

from __future__ import annotations

import time
from typing import Any

from gkeml_magics.explain_view import PreviewView, WaitingLine, WhyView, status_line
from gkeml_sdk import Category, Evidence, Explanation, Preview, RunState, RunStatus, Verdict

CRASH = Explanation(
    Category.CRASH,
    "Failed: pod p exited with code 1. Read the logs (run.logs()), fix the code, and resubmit.",
    (Evidence("Pod", "p", "container trainer terminated", "Error", "exit code 1", "T1"),),
)


def test_why_speaks_the_magics_words_and_folds_the_evidence() -> None:
    view = WhyView("train", CRASH)
    assert "(%gke_logs train)" in repr(view) and "run.logs()" not in repr(view)
    page = view._repr_html_()
    assert "<details><summary>evidence (1)</summary>" in page and "exit code 1" in page
    assert "%gke_logs train" in page


def test_preview_view_says_nothing_was_submitted() -> None:
    view = PreviewView("ft", Preview(Verdict.WAITS, "Waits: acc-cq is full."))
    assert repr(view) == "ft (not submitted): Waits: acc-cq is full."
    assert "waits" in view._repr_html_()


class FakeRun:
    name = "train"

    def __init__(self, explanation: Any) -> None:
        self.explanation = explanation
        self.asked = 0

    def explain(self) -> Explanation:
        self.asked += 1
        if isinstance(self.explanation, Exception):
            raise self.explanation
        return self.explanation


def test_the_wait_line_explains_only_waiting_runs_and_never_fails() -> None:
    queued = RunStatus(RunState.QUEUED, "WaitingForQuota", "")
    run = FakeRun(Explanation(Category.QUOTA, "Queued 1st in team-a: acc-cq is full."))
    line = status_line(run, queued, time.monotonic())  # type: ignore[arg-type]
    assert isinstance(line, WaitingLine) and "why: Queued 1st in team-a" in repr(line)
    assert "Queued 1st" in line._repr_html_()
    running = status_line(run, RunStatus(RunState.RUNNING), time.monotonic())  # type: ignore[arg-type]
    assert not isinstance(running, WaitingLine) and run.asked == 1
    broken = FakeRun(RuntimeError("API down"))
    plain = status_line(broken, queued, time.monotonic())  # type: ignore[arg-type]
    assert not isinstance(plain, WaitingLine) and broken.asked == 1
