"""`Tier`: what a tenant is promised (GPU isolation, standbys, recovery time objective and
recovery priority), with the three product tiers A, B and C as named defaults."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, SpecModel, fail
from gkeml_sdk.errors import excerpt

Isolation = Literal["exclusive", "shared", "preemptible"]
StandbyLevel = Literal["hot", "warm", "cold"]
# PriorityClass values for user classes stop at one billion (scheduling.k8s.io/v1).
MAX_PRIORITY = 1_000_000_000
# A preemptible tier's pods rank below a normal tier's (10000), so the scheduler evicts them
# first when a higher tier needs the GPUs.
PREEMPTIBLE_PRIORITY_MAX = 1000

DEFAULTS: dict[str, dict[str, Any]] = {
    "A": {
        "isolation": "exclusive",
        "standbys": 2,
        "standby_level": "hot",
        "rto_seconds": 5.0,
        "recovery_priority": 3,
        "priority": 100_000,
    },
    "B": {
        "isolation": "shared",
        "standbys": 1,
        "standby_level": "warm",
        "rto_seconds": 30.0,
        "recovery_priority": 2,
        "priority": 10_000,
    },
    "C": {
        "isolation": "preemptible",
        "standbys": 0,
        "standby_level": "cold",
        "rto_seconds": 300.0,
        "recovery_priority": 1,
        "priority": 10,
    },
}


class Tier(SpecModel):
    """An isolation tier. `Tier(name="A")` is the product's tier A; any field may be
    overridden, and a tier of another name starts from the tier named in `like`.

    Example:
        >>> Tier(name="A").rto_seconds, Tier(name="A", standbys=3).standbys
        (5.0, 3)
        >>> Tier(name="gold", like="A", rto_seconds=2).isolation
        'exclusive'
    """

    name: str = Field(description="The tier's name.")
    like: Literal["A", "B", "C"] | None = Field(
        default=None,
        description='A built-in tier ("A", "B" or "C") whose values the others default to.',
    )
    isolation: Isolation = Field(
        description='How the tenant\'s GPUs are held: "exclusive", "shared" or "preemptible".'
    )
    standbys: int = Field(description="Standby replicas per model, ready to take over.")
    standby_level: StandbyLevel = Field(
        description='How ready a standby is: "hot" (serving), "warm" (asleep) or "cold".'
    )
    rto_seconds: float = Field(
        description="Recovery time objective: longest time to recover from a lost primary."
    )
    recovery_priority: int = Field(description="Order of failover; higher fails over first.")
    priority: int = Field(
        description="PriorityClass (and Kueue WorkloadPriorityClass) value of the serving pods."
    )

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            return data
        base = data.get("like") or data.get("name")
        if not isinstance(base, str) or base not in DEFAULTS:
            missing = [f for f in DEFAULTS["A"] if f not in data]
            if missing:
                quoted = excerpt(repr(base), 40)
                raise fail(
                    f"tier {quoted} is not one of A, B, C and leaves {', '.join(missing)} unset",
                    rule="a named tier starts from a product tier's defaults",
                    fix=f"Tier(name={quoted}, like='A') (or 'B', 'C'), or set every field",
                    field="like",
                )
            return data
        return {**DEFAULTS[str(base)], **data}

    @model_validator(mode="after")
    def _check(self) -> Tier:
        if not DNS1123_LABEL.match(self.name.lower()) or len(self.name) > 40:
            raise fail(
                f"tier name {self.name!r}",
                rule="the tier names PriorityClasses: letters, digits and '-', at most 40",
                fix="name='gold'",
                field="name",
            )
        if self.standbys < 0:
            raise fail(f"standbys={self.standbys}", fix="standbys=0 or more", field="standbys")
        if self.rto_seconds <= 0:
            raise fail(
                f"rto_seconds={self.rto_seconds}",
                rule="a recovery time objective is a positive duration",
                fix="rto_seconds=30",
                field="rto_seconds",
            )
        if not -MAX_PRIORITY <= self.priority <= MAX_PRIORITY:
            raise fail(
                f"priority={self.priority}",
                rule="user PriorityClass values lie within +-1,000,000,000; larger are reserved "
                "for system-cluster-critical and system-node-critical",
                fix="priority=100000",
                field="priority",
            )
        return self

    @property
    def key(self) -> str:
        """The tier in object names: `gkeml-tier-<key>-<priority>`."""
        return self.name.lower()

    @property
    def preemptible(self) -> bool:
        """True when this tier's pods rank low enough to be preempted by a normal tier."""
        return self.priority <= PREEMPTIBLE_PRIORITY_MAX
