"""Runs in a notebook: one run as its timeline, several as a table.

Example:
    >>> from gkeml_sdk import Client  # doctest: +SKIP
    >>> from gkeml_sdk.pictures.runs import runs_html  # doctest: +SKIP
    >>> html = runs_html(Client(backend="local").runs(), note="local runs")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gkeml_sdk.pictures.svg import esc, state_colour
from gkeml_sdk.pictures.table import RunRow, runs_table
from gkeml_sdk.pictures.timeline import Step, timeline_svg

if TYPE_CHECKING:  # annotations only: run.py draws itself with this module
    from gkeml_sdk.runs.handle import Run, RunStatus


def run_html(run: Run) -> str:
    """A run's state in one line, then its timeline (one lane per attempt)."""
    status = run.state
    steps = [
        Step(t.attempt, t.at, t.status.state.value, _detail(t.status.reason, t.status.message))
        for t in run.history
    ]
    colour, counters = state_colour(status.state.value), run.counters
    attempt = max((s.attempt for s in steps), default=1)
    head = (
        f"<div><b>{esc(run.name)}</b> ({esc(run.namespace)}) <span style='color:{colour}'>"
        f"{esc(status.state.value)}</span> {esc(_detail(status.reason, status.message))}; "
        f"attempt {attempt}, {counters.preemptions} preemption(s), "
        f"{counters.user_restarts} restart(s)</div>"
    )
    rows = "".join(
        f"<tr><td>{s.at:.1f} s</td><td>{s.attempt}</td><td>{esc(s.state)}</td>"
        f"<td>{esc(s.detail)}</td></tr>"
        for s in steps
    )
    history = (
        "<details><summary>history</summary><table><tr><th>at</th><th>attempt</th>"
        f"<th>state</th><th>reason: message</th></tr>{rows}</table></details>"
    )
    timeline = timeline_svg(run.name, steps)
    return f"<div data-run='{esc(run.name)}'>{head}{timeline}{history}</div>"


def runs_html(
    runs: Sequence[Run], note: str = "", states: Sequence[RunStatus] | None = None
) -> str:
    """`runs` as a table with coloured states, durations and attempts, `note` above it;
    `states` are the runs' statuses when the caller has read them already (a table shown in
    two forms reads each run once).

    Example:
        >>> runs_html([], note="local runs")  # doctest: +ELLIPSIS
        '<table data-picture="runs-table" ...no runs...'
    """
    rows = []
    for i, run in enumerate(runs):
        status, history = run.state if states is None else states[i], run.history
        seconds = history[-1].at if history else None
        attempts = max((t.attempt for t in history), default=1)
        rows.append(
            RunRow(run.name, run.namespace, status.state.value, status.reason, seconds, attempts)
        )
    return runs_table(rows, note)


def _detail(reason: str, message: str) -> str:
    return ": ".join(part for part in (reason, message) if part)
