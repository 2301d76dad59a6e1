"""One row of the issue-25 scale table (`python tests/bench/bench_scale.py` prints them all).

Each scale bench module exposes `rows() -> list[ScaleRow]`, measured in that call, and can be
run on its own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScaleRow:
    """What was measured, the figure, the goal it is held to and whether it met it."""

    what: str
    measured: str
    goal: str
    met: bool

    def line(self) -> str:
        verdict = "met" if self.met else "NOT met"
        return f"| {self.what} | {self.measured} | {self.goal} | {verdict} |"
