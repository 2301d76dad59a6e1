"""How the magics show `run.explain()` and `client.preview(job)`: the sentence first, the
evidence folded away in HTML, and a `--wait` status line that says why a run still waits."""

from __future__ import annotations

import html
from dataclasses import dataclass

from gkeml_sdk import Explanation, Preview, Run, RunState, RunStatus

from .display import WRAP, StatusLine

WAITING = (RunState.PENDING, RunState.QUEUED, RunState.WAITING_FOR_CAPACITY)
_COLOURS = {"succeeded": "green", "running": "green", "starting": "#268bd2", "fits now": "green"}


@dataclass(frozen=True)
class WhyView:
    """`%gke_why NAME`: the sentence, the category, and the evidence in a <details> fold."""

    name: str
    explanation: Explanation

    @property
    def sentence(self) -> str:
        """The explanation's sentence, its Python advice in the magics' words."""
        return self.explanation.sentence.replace("run.logs()", f"%gke_logs {self.name}")

    def __repr__(self) -> str:
        lines = [f"{self.name}: {self.sentence}",
                 f"  category: {self.explanation.category.value}"]  # fmt: skip
        lines += [f"    {fact}" for fact in self.explanation.evidence]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        category = self.explanation.category.value
        return (
            f"<div><b>{html.escape(self.name)}</b> {_badge(category)}"
            f"<p>{html.escape(self.sentence)}</p>"
            f"{_fold(self.explanation.evidence)}</div>"
        )


@dataclass(frozen=True)
class PreviewView:
    """`%%gke_train --preview`: Kueue's verdict for the cell's job; nothing is submitted."""

    name: str
    preview: Preview

    def __repr__(self) -> str:
        return f"{self.name} (not submitted): {self.preview.sentence}"

    def _repr_html_(self) -> str:
        verdict = self.preview.verdict.value
        return (
            f"<div><b>{html.escape(self.name)}</b> (not submitted) {_badge(verdict)}"
            f"<p>{html.escape(self.preview.sentence)}</p>{_fold(self.preview.evidence)}</div>"
        )


@dataclass(frozen=True)
class WaitingLine(StatusLine):
    """A `--wait` status line for a run that still waits, with the reason why."""

    why: str = ""

    def __repr__(self) -> str:
        return f"{super().__repr__()}\n  why: {self.why}"

    def _repr_html_(self) -> str:
        return f"{super()._repr_html_()}<div><small>{html.escape(self.why)}</small></div>"


def status_line(run: Run, status: RunStatus, started: float) -> StatusLine:
    """The `--wait` line for `status`; a waiting run also says why (one read of the cluster)."""
    if status.state not in WAITING:
        return StatusLine(run.name, status, started)
    try:
        why = run.explain().sentence
    except Exception:  # the status line never fails the wait; `%gke_why` shows the error
        return StatusLine(run.name, status, started)
    return WaitingLine(run.name, status, started, why)


def _fold(evidence: tuple[object, ...]) -> str:
    if not evidence:
        return ""
    items = "".join(f"<li><code>{html.escape(str(fact))}</code></li>" for fact in evidence)
    fold = f"<details><summary>evidence ({len(evidence)})</summary><ul style={WRAP}>"
    return f"{fold}{items}</ul></details>"


def _badge(text: str) -> str:
    colour = _COLOURS.get(text, "#b58900")
    return f"<code style='color:{colour}'>{html.escape(text)}</code>"
