"""Where a run spent its time: one lane per attempt, one coloured span per state.

Example:
    >>> from gkeml_sdk.pictures.timeline import Step, timeline_svg
    >>> steps = [Step(1, 0.0, "Queued", "waiting for quota"), Step(1, 4.0, "Running", ""),
    ...          Step(1, 9.0, "Succeeded", "done")]
    >>> svg = timeline_svg("ft", steps)
    >>> 'data-picture="run-timeline"' in svg and "attempt 1" in svg
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.pictures.svg import legend, legend_lines, rect, state_colour, svg, text, text_width

WIDTH = 640
LEFT = 78  # room for the lane labels
RIGHT = 16
LANE = 22
MIN_SPAN = 4.0  # px: a state that lasted an instant (a preemption) still shows
TERMINAL = ("Succeeded", "Failed", "Cancelled")


@dataclass(frozen=True)
class Step:
    """One transition: the attempt it belongs to, seconds since submission, the state's
    value ("Running") and the reason and message to show on hover."""

    attempt: int
    at: float
    state: str
    detail: str


def timeline_svg(name: str, steps: list[Step], now: float | None = None) -> str:
    """The timeline of run `name`; an unfinished run's last state lasts until `now`
    (seconds since submission, default: its last transition)."""
    if not steps:
        empty = f"{name}: no history yet"
        return svg("run-timeline", f"run {empty}", max(WIDTH, 8 + text_width(empty)), 24,
                   [text(4, 16, empty)])  # fmt: skip
    attempts = sorted({s.attempt for s in steps})
    finished = steps[-1].state in TERMINAL
    end = steps[-1].at if finished or now is None else max(now, steps[-1].at)
    span = max(end, 1e-9)
    title = f"{name}: {steps[-1].state} after {end:.1f} s"
    picture_w = max(WIDTH, 4 + text_width(title, 12) + RIGHT)
    inner = picture_w - LEFT - RIGHT
    top = 22
    body = [text(4, 14, title, size=12)]

    def x_of(seconds: float) -> float:
        return LEFT + inner * seconds / span

    for lane, attempt in enumerate(attempts):
        y = top + lane * LANE
        body.append(text(4, y + 15, f"attempt {attempt}"))
        body.append(rect(LEFT, y + 2, inner, LANE - 4, "#f2f3f4"))
    for i, step in enumerate(steps):
        y = top + attempts.index(step.attempt) * LANE
        stop = steps[i + 1].at if i + 1 < len(steps) else end
        x0 = x_of(step.at)
        width = max(x_of(stop) - x0, MIN_SPAN)
        if step.state in TERMINAL:  # a run ends at an instant: a mark, not a span
            x0, width = min(x0, LEFT + inner - MIN_SPAN), MIN_SPAN
        tip = f"{step.state} at {step.at:.1f} s (attempt {step.attempt})"
        tip += f": {step.detail}" if step.detail else ""
        body.append(rect(x0, y + 2, width, LANE - 4, state_colour(step.state), tip, step.state))
    axis_y = top + len(attempts) * LANE + 12
    for k in range(5):
        seconds = span * k / 4 if end else 0.0
        anchor = "start" if k == 0 else "end" if k == 4 else "middle"
        body.append(text(x_of(seconds), axis_y, f"{seconds:.1f} s", 10, anchor, "#555"))
    seen = list(dict.fromkeys(s.state for s in steps))
    keys = [(state_colour(s), s) for s in seen]
    body += legend(LEFT, axis_y + 18, keys, inner)
    height = axis_y + 14 + 16 * legend_lines(keys, inner)
    label = f"run timeline of {name}: " + ", ".join(seen)
    return svg("run-timeline", label, picture_w, height, body)
