"""`RetryPolicy`: how the client resubmits a run lost to infrastructure (never user-code
failures, never Kueue preemptions that Kueue requeues itself)."""

from __future__ import annotations

from pydantic import Field, model_validator
from tenacity import RetryCallState, Retrying, wait_exponential

from gkeml_sdk.core.environment import MAX_RESUBMITS
from gkeml_sdk.core.model import SpecModel, fail

_MAX_DOUBLINGS = 1000
MAX_BACKOFF_SECONDS = 86_400.0


class RetryPolicy(SpecModel):
    """Client-side resubmission after terminal infrastructure loss.

    Example:
        >>> p = RetryPolicy(max_resubmits=3, fallback_to_on_demand_after=2)
        >>> p.delay(1), p.delay(10)
        (30.0, 600.0)
    """

    max_resubmits: int = Field(
        2, description="Resubmissions after infrastructure loss before giving up."
    )
    fallback_to_on_demand_after: int | None = Field(
        None, description="Spot losses before leaving Spot for on-demand; None: never."
    )
    backoff_seconds: float = Field(
        30.0, description="Wait before the first resubmission; later waits grow from it."
    )
    max_backoff_seconds: float = Field(600.0, description="Longest wait before a resubmission.")

    @model_validator(mode="after")
    def _check(self) -> RetryPolicy:
        if not 0 <= self.max_resubmits <= MAX_RESUBMITS:
            raise fail(
                f"max_resubmits={self.max_resubmits}",
                rule=f"a count of resubmissions, at most {MAX_RESUBMITS} (attempt k is named "
                "'<run>--r<k>', and every attempt's names must fit Kubernetes' 63 characters)",
                fix=f"max_resubmits=0 to never resubmit, or up to max_resubmits={MAX_RESUBMITS}",
            )
        if self.fallback_to_on_demand_after is not None and self.fallback_to_on_demand_after < 1:
            raise fail(
                f"fallback_to_on_demand_after={self.fallback_to_on_demand_after}",
                rule="the number of Spot losses to accept before switching to on-demand",
                fix="fallback_to_on_demand_after=1 or more, or None to stay on Spot",
            )
        if not 0 <= self.backoff_seconds <= self.max_backoff_seconds <= MAX_BACKOFF_SECONDS:
            raise fail(
                f"backoff_seconds={self.backoff_seconds}, max_backoff_seconds="
                f"{self.max_backoff_seconds}",
                rule=f"0 <= backoff_seconds <= max_backoff_seconds <= {MAX_BACKOFF_SECONDS} "
                "(a run waits at most a day between resubmissions)",
                fix="backoff_seconds=30, max_backoff_seconds=600",
            )
        return self

    def delay(self, resubmission: int) -> float:
        """Seconds to wait before resubmission number `resubmission` (1-based), capped.

        Example:
            >>> RetryPolicy().delay(1100)
            600.0
        """
        # The backoff every retry in gkeml uses (tenacity); 2**k beyond _MAX_DOUBLINGS already
        # exceeds any cap, and larger k would only cost time.
        state = RetryCallState(Retrying(), None, (), {})
        state.attempt_number = min(max(resubmission, 1), _MAX_DOUBLINGS + 1)
        wait = wait_exponential(multiplier=self.backoff_seconds, max=self.max_backoff_seconds)
        return float(wait(state))

    def wants_on_demand(self, losses: int) -> bool:
        """True when a Spot job should move to on-demand after `losses` Spot losses (reclaimed
        pods and attempts lost while on Spot; Kueue preemptions are not Spot losses)."""
        after = self.fallback_to_on_demand_after
        return after is not None and losses >= after
