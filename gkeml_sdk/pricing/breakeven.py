"""When Spot pays: the share of the on-demand price Spot saves, and how much work preemptions
may cost before that saving is gone, from the checkpoint interval and the expected rate of
preemptions.

Each preemption loses, on average, half a checkpoint interval of work plus the time a new
Spot node takes to start the pod and restore the checkpoint. The run then takes
`hours * (1 + overhead)` on Spot, and Spot pays while `overhead` stays under
`on_demand / spot - 1`.
"""

from __future__ import annotations

from dataclasses import dataclass

# Compute Engine publishes no Spot preemption rate: one a day is an assumption to replace
# with your own history (`preemptions_per_day=`).
DEFAULT_PREEMPTIONS_PER_DAY = 1.0
# A common checkpoint cadence for training jobs; pass the job's own (`checkpoint_minutes=`).
DEFAULT_CHECKPOINT_MINUTES = 30.0
# A new node, the image pull and the checkpoint restore after a preemption (`restart_minutes=`).
DEFAULT_RESTART_MINUTES = 10.0


@dataclass(frozen=True, slots=True)
class BreakEven:
    """Spot against on-demand for one run.

    `saving`: the share of the on-demand price Spot saves (0.7 = 70 %); `limit`: the share of
    the run that lost work may add before Spot costs as much as on-demand; `overhead`: the
    share the expected preemptions add; `max_preemptions`: how many this run can take.

    Example:
        >>> b = break_even(10.0, 3.0, hours=24)
        >>> f"{b.saving:.0%} {b.limit:.0%} {b.overhead:.1%}", b.max_preemptions, b.pays
        ('70% 233% 1.7%', 134, True)
    """

    saving: float
    limit: float
    overhead: float
    lost_minutes: float  # per preemption
    max_preemptions: int
    checkpoint_minutes: float
    preemptions_per_day: float

    @property
    def pays(self) -> bool:
        """True when the expected preemptions cost less than the Spot saving."""
        return self.overhead < self.limit

    def __str__(self) -> str:
        verdict = "Spot pays" if self.pays else "Spot does not pay"
        return (
            f"Spot saves {self.saving:.0%} of on-demand; it pays while lost work adds less than "
            f"{self.limit:.0%} of the run ({self.max_preemptions} preemptions of "
            f"~{self.lost_minutes:g} min each). Expected: {self.preemptions_per_day:g} a day, "
            f"checkpoint every {self.checkpoint_minutes:g} min -> +{self.overhead:.1%}: "
            f"{verdict}"
        )


def break_even(
    on_demand: float,
    spot: float,
    *,
    hours: float,
    checkpoint_minutes: float = DEFAULT_CHECKPOINT_MINUTES,
    preemptions_per_day: float = DEFAULT_PREEMPTIONS_PER_DAY,
    restart_minutes: float = DEFAULT_RESTART_MINUTES,
) -> BreakEven:
    """Spot against on-demand for a run of `hours`, both prices per hour of the whole job and
    above 0, and a checkpoint interval above 0 (`estimate_cost` checks them)."""
    lost = checkpoint_minutes / 2 + restart_minutes
    limit = on_demand / spot - 1
    return BreakEven(
        saving=1 - spot / on_demand,
        limit=limit,
        overhead=preemptions_per_day * lost / (24 * 60),
        lost_minutes=lost,
        max_preemptions=int(limit * hours * 60 / lost),
        checkpoint_minutes=checkpoint_minutes,
        preemptions_per_day=preemptions_per_day,
    )
