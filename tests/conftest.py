"""Fixtures shared by every test: the fake kube-apiserver (tests/kubeapi/fixtures.py); and the
last line of a run that could not read the shared folder, counting what it skipped."""

from __future__ import annotations

from typing import Any

from tests.shared_dir import SHARED

pytest_plugins = ["tests.kubeapi.fixtures"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line when tests skipped for want of the shared folder: how many, and how to run
    them. Such tests say where they looked, which is under `SHARED`."""
    count = shared_skips(terminalreporter.stats.get("skipped", []))
    if count:
        terminalreporter.write_line(
            f"{count} schema and recording checks skipped: the shared folder (CRD schemas, "
            f"recordings of a real control plane) was not found at {SHARED}; set GKEML_SHARED "
            "to the folder holding crds/ and fixtures/ to run them",
            yellow=True,
        )


def shared_skips(reports: list[Any]) -> int:
    """How many skip reports name a place in the shared folder as their reason."""
    return sum(1 for report in reports if str(SHARED) in str(report.longrepr))
