"""`UnreadableRun`: what `runs()` lists for a run whose record cannot be read (a cluster's run
record, a local run's files), so one damaged or foreign record never hides the other runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

from gkeml_sdk.errors import GkemlError
from gkeml_sdk.runs.handle import (
    ProgressCallback,
    Run,
    RunCounters,
    RunState,
    RunStatus,
    Transition,
)
from gkeml_sdk.runs.service import RunRef

if TYPE_CHECKING:
    from gkeml_sdk.runs.explain.explanation import Explanation


class UnreadableRun(Run):
    """A run whose record gkeml cannot read: its state says why; following, cancelling or
    explaining it raises that error (gkeml leaves its objects alone).

    Example:
        >>> from gkeml_sdk.errors import ConfigError
        >>> run = UnreadableRun("ft", "ml", ConfigError("record ft-gkeml-run is damaged"))
        >>> run.state.state.value, run.state.message
        ('Unreadable', 'record ft-gkeml-run is damaged')
    """

    def __init__(self, name: str, namespace: str, error: GkemlError) -> None:
        self._ref, self.error = RunRef(name, namespace), error

    @property
    def state(self) -> RunStatus:
        """UNREADABLE, with why."""
        return RunStatus(RunState.UNREADABLE, "UnreadableRecord", str(self.error))

    @property
    def history(self) -> list[Transition]:
        """Nothing is known."""
        return []

    @property
    def counters(self) -> RunCounters:
        """Nothing is known."""
        return RunCounters()

    def wait(
        self, timeout: float | None = None, progress: bool | ProgressCallback = False
    ) -> RunStatus:
        """Raises why the record cannot be read."""
        self._refuse()

    def logs(self, follow: bool = False, *, by_time: bool = False) -> Iterator[str]:
        """Raises why the record cannot be read."""
        self._refuse()

    def cancel(self) -> bool:
        """Raises why the record cannot be read."""
        self._refuse()

    def explain(self) -> Explanation:
        """Raises why the record cannot be read."""
        self._refuse()

    def _refuse(self) -> NoReturn:
        raise self.error
