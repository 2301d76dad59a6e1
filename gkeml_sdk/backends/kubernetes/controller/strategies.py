"""Recovery strategies, named and pluggable (as SkyPilot's managed jobs pick one): after an
attempt ends, the strategy says whether and how the run gets another attempt.

Example:
    >>> from gkeml_sdk import RetryPolicy, TrainingJob
    >>> from gkeml_sdk.backends.kubernetes.run_record import AttemptRecord, RunRecord
    >>> from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus
    >>> job = TrainingJob(name="ft", image="i", command=["x"], spot=True)
    >>> record = RunRecord(job=job, submitted_at=0.0, attempts=(AttemptRecord(1, "ft", True),),
    ...     retry=RetryPolicy(max_resubmits=2, fallback_to_on_demand_after=1))
    >>> lost = RunStatus(RunState.FAILED, "NodeLost", cause=FailureCause.INFRASTRUCTURE)
    >>> choose_strategy(record, lost, spot_losses=1).name
    'spot-fallback'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from gkeml_sdk.backends.kubernetes.run_record import AttemptRecord, RunRecord, attempt_name
from gkeml_sdk.runs.classify import resubmittable
from gkeml_sdk.runs.handle import RunStatus


@dataclass(frozen=True)
class Plan:
    """The next attempt a strategy asks for and how long to wait before creating it."""

    attempt: AttemptRecord
    delay: float
    detail: str = ""


class RecoveryStrategy(ABC):
    """What to do once an attempt ended."""

    name: ClassVar[str]

    @abstractmethod
    def plan(self, record: RunRecord) -> Plan | None:
        """The next attempt, or None to leave the run where it ended."""


class GiveUp(RecoveryStrategy):
    """The end is final: success, user code, a person's cancel or the policy's limit."""

    name = "give-up"

    def plan(self, record: RunRecord) -> Plan | None:
        """Nothing more to do."""
        return None


class Resubmit(RecoveryStrategy):
    """A new attempt on the same capacity after the policy's backoff (tenacity's exponential
    wait, see `RetryPolicy.delay`)."""

    name = "resubmit"
    spot: bool | None = None  # None: as the last attempt ran
    detail = ""

    def plan(self, record: RunRecord) -> Plan | None:
        """Attempt n+1, named deterministically, so two deciders make the same object."""
        assert record.retry is not None
        number = record.current.attempt + 1
        spot = record.current.spot if self.spot is None else self.spot
        attempt = AttemptRecord(number, attempt_name(record.name, number), spot)
        return Plan(attempt, record.retry.delay(number - 1), self.detail)


class FallBackToOnDemand(Resubmit):
    """A new attempt off Spot, once the run lost `fallback_to_on_demand_after` attempts or
    pods to Spot reclaims (Kueue preemptions do not count: on-demand would not avoid them)."""

    name = "spot-fallback"
    spot = False
    detail = "on-demand (Spot fallback)"


STRATEGIES: dict[str, type[RecoveryStrategy]] = {
    s.name: s for s in (GiveUp, Resubmit, FallBackToOnDemand)
}


def choose_strategy(record: RunRecord, end: RunStatus, spot_losses: int) -> RecoveryStrategy:
    """The strategy for a run whose current attempt ended with `end`; `spot_losses` counts
    only Spot reclaims (disrupted pods and attempts lost to infrastructure while on Spot)."""
    policy = record.retry
    resubmits = record.current.attempt - 1
    if (
        policy is None
        or record.cancelled
        or not resubmittable(end)
        or resubmits >= policy.max_resubmits
    ):
        return GiveUp()
    if record.current.spot and policy.wants_on_demand(spot_losses):
        return FallBackToOnDemand()
    return Resubmit()
