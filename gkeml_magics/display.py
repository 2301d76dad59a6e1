"""What the magics show: small objects with a text and an HTML form, so notebooks render
HTML and terminals (and tests) read text."""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from gkeml_sdk import (
    CostEstimate,
    Manifests,
    NoClusterError,
    Run,
    RunStatus,
    TrainingJob,
    runs_html,
)

# Long tokens (a gcloud command with --member=principal://...) wrap instead of running off
# the page.
WRAP = "'overflow-wrap:anywhere'"


@dataclass(frozen=True)
class StatusLine:
    """One line for a run's current status; a `--wait` display handle shows it in place."""

    name: str
    status: RunStatus
    started: float

    def __repr__(self) -> str:
        return f"{self.name}: {self.status} ({time.monotonic() - self.started:.0f} s)"

    def _repr_html_(self) -> str:
        colour = {"Succeeded": "green", "Failed": "red", "Cancelled": "gray"}.get(
            self.status.state.value, "#b58900"
        )
        return (
            f"<div><b>{html.escape(self.name)}</b> "
            f"<span style='color:{colour}'>{html.escape(str(self.status))}</span> "
            f"<small>({time.monotonic() - self.started:.0f} s)</small></div>"
        )


@dataclass(frozen=True)
class RunView:
    """A run with its history; text form for terminals, the run's own HTML for notebooks."""

    run: Run

    def __repr__(self) -> str:
        status = self.run.state
        lines = [f"{self.run.name} ({self.run.namespace}): {status}"]
        for t in self.run.history:
            lines.append(f"  +{t.at:6.1f}s attempt {t.attempt}: {t.status}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return self.run._repr_html_()


def no_cluster_note(exc: NoClusterError) -> str:
    """One line: no cluster is configured, these are the local runs, how to point at one."""
    return (
        f"no cluster configured ({exc.why}), so these are the local runs; point at one with "
        f"`!{exc.GET_CREDENTIALS}` or %gke_config --kubeconfig PATH --context NAME"
    )


@dataclass(frozen=True)
class RunTable:
    """Runs as a table, newest first, with a note above them (e.g. that no cluster is
    configured); the HTML form colours states and shows how long each run took."""

    runs: Sequence[Run]
    note: str = ""

    @cached_property
    def states(self) -> list[RunStatus]:
        """Each run's status, read once: a notebook asks for both forms."""
        return [run.state for run in self.runs]

    def __repr__(self) -> str:
        head = [self.note] if self.note else []
        if not self.runs:
            return "\n".join([*head, "no runs"])
        width = max(len(r.name) for r in self.runs)
        body = [
            f"{r.name:<{width}}  {r.namespace:<12} {s.state.value:<11} {s.reason}"
            for r, s in zip(self.runs, self.states, strict=True)
        ]
        return "\n".join(head + body)

    def _repr_html_(self) -> str:
        return runs_html(self.runs, self.note, self.states)


@dataclass(frozen=True)
class DryRun:
    """Validation result, cost estimate and manifests of a job that was not submitted."""

    job: TrainingJob
    manifests: Manifests
    cost: CostEstimate
    yaml: str  # rendered once: a notebook asks for both the text and the HTML form

    @classmethod
    def of(cls, job: TrainingJob, hours: float) -> DryRun:
        """Compile `job` and price `hours` of it."""
        manifests = job.compile()
        return cls(job, manifests, job.estimate_cost(hours=hours), manifests.to_yaml())

    def __repr__(self) -> str:
        notes = "".join(f"note: {n}\n" for n in self.manifests.notes)
        return (
            f"valid: {self.job!r} -> {self.manifests!r}\n{notes}cost: {self.cost}\n---\n{self.yaml}"
        )

    def _repr_html_(self) -> str:
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.manifests.notes)
        return (
            f"<div><b>valid</b> <code>{html.escape(repr(self.job))}</code>"
            f"{f'<ul style={WRAP}>{notes}</ul>' if notes else ''}"
            f"{self.cost._repr_html_()}<details><summary>{html.escape(repr(self.manifests))}"
            f"</summary><pre>{html.escape(self.yaml)}</pre></details></div>"
        )


@dataclass(frozen=True)
class ConfigView:
    """The magics' current defaults."""

    rows: list[tuple[str, str]]

    def __repr__(self) -> str:
        return "\n".join(f"{k:<11} {v}" for k, v in self.rows)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td>{html.escape(k)}</td><td><code>{html.escape(v)}</code></td></tr>"
            for k, v in self.rows
        )
        return f"<table>{body}</table>"


@dataclass(frozen=True)
class CostView:
    """A cost estimate, as text in terminals (its own HTML in notebooks)."""

    cost: CostEstimate

    def __repr__(self) -> str:
        return str(self.cost)

    def _repr_html_(self) -> str:
        return self.cost._repr_html_()
