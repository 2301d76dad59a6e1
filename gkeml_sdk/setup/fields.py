"""What a cluster setup is: its teams (`Team`) and every field of `ClusterSetup` with its
meaning. The rules and builders of this folder read a setup through `ClusterSetupFields`;
`setup.model.ClusterSetup` adds the checks and `compile()`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, SpecModel, fail
from gkeml_sdk.core.quantity import check_quantity
from gkeml_sdk.core.rules import check_name
from gkeml_sdk.setup.capacity_model import Capacity
from gkeml_sdk.setup.multikueue import WorkerCluster


class Team(SpecModel):
    """A team: its namespaces, and its nominal quota of each capacity, in the units its pods
    request (GPUs, MIG slices or TPU chips), for every provisioning mode of that capacity.

    Example:
        >>> Team(name="team-a", quota={"h100": 16}).namespaces
        ('team-a',)
    """

    name: str = Field(
        description="The team's name: its ClusterQueue and LocalQueues are named after it."
    )
    namespaces: tuple[str, ...] = Field(
        default=(),
        description="The team's namespaces; empty: one namespace named after the team.",
    )
    quota: dict[str, int] = Field(
        default_factory=dict,
        description="Accelerators the team may use at once: capacity name -> units pods request.",
    )
    borrowing_limit: int | None = Field(
        default=None,
        description="Units it may borrow from the cohort beyond its quota; None: any idle quota.",
    )
    # CPU and memory are covered so that pods which request them can be admitted; accelerators
    # are what the quota really limits (XPK's defaults are the same kind of ceiling).
    cpu: str = Field(default="10000", description="CPU quota of the team's queues (a quantity).")
    memory: str = Field(
        default="10000Gi", description="Memory quota of the team's queues (a quantity)."
    )
    ephemeral_storage: str = Field(
        default="100000Gi",
        description="Local disk quota of the team's queues (a quantity): model servers "
        "request it for their weights cache.",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_namespace(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("namespaces") and data.get("name"):
            data = {**data, "namespaces": (data["name"],)}
        return data

    @model_validator(mode="after")
    def _check(self) -> Team:
        check_name("team name", self.name, DNS1123_LABEL, 40)
        for namespace in self.namespaces:
            check_name("namespace", namespace, DNS1123_LABEL, 63)
        check_quantity("cpu", self.cpu)
        check_quantity("memory", self.memory)
        check_quantity("ephemeral_storage", self.ephemeral_storage)
        numbers = {**self.quota, "borrowing_limit": self.borrowing_limit or 0}
        for key, value in numbers.items():
            if value < 0:
                raise fail(f"team {self.name!r}: {key}={value}", fix="a count >= 0", field=key)
        return self

    def queue(self, provisioning: str) -> str:
        """Name of the team's LocalQueue (and ClusterQueue) for a provisioning mode."""
        return self.name if provisioning == "standard" else f"{self.name}-{provisioning}"


class ClusterSetupFields(SpecModel):
    """The fields of a `ClusterSetup` and what they imply (its capacities' modes)."""

    capacity: list[Capacity] = Field(
        description="The hardware the cluster's node pools offer: `Capacity(...)` per kind."
    )
    teams: list[Team] = Field(
        description="Teams with their namespaces and quota: `Team(...)`, one ClusterQueue each."
    )
    cohort: str = Field(
        default="gkeml",
        description="Kueue cohort of the teams' ClusterQueues, where unused quota is lent.",
    )
    priorities: dict[str, int] | None = Field(
        default=None,
        description="WorkloadPriorityClasses: name -> value, which jobs pick with priority=; "
        "None: low, normal and high; {}: none.",
    )
    queues: Literal["per-mode", "ordered"] = Field(
        default="per-mode",
        description='"per-mode": a ClusterQueue per team and mode, picked by queue name; '
        '"ordered": one per team holding every mode, Kueue\'s flavor fungibility picks the '
        "first that fits.",
    )
    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] = Field(
        default="TryNextFlavor",
        description="Kueue flavorFungibility: try the next flavor rather than borrow.",
    )
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] = Field(
        default="TryNextFlavor",
        description="Kueue flavorFungibility: try the next flavor rather than preempt.",
    )
    reclaim_within_cohort: str = Field(
        default="Any",
        description="Kueue preemption: take lent quota back from borrowers.",
    )
    within_cluster_queue: str = Field(
        default="LowerPriority",
        description="Kueue preemption inside a team's queue.",
    )
    borrow_within_cohort: str = Field(
        default="LowerPriority",
        description="Kueue preemption while borrowing, elsewhere in the cohort.",
    )
    queued_retries: int = Field(
        default=3,
        description="New ProvisioningRequests after a failed one, then the job is deactivated.",
    )
    workers: list[WorkerCluster] = Field(
        default_factory=list,
        description="MultiKueue worker clusters; with them this setup is the manager's, "
        "dispatching to them (for_worker() gives theirs).",
    )
    nccl_installers: bool = Field(
        default=True, description="Install the NCCL plugin DaemonSet of each GPUDirect capacity."
    )

    @field_validator("teams", "capacity")
    @classmethod
    def _not_empty(cls, value: list[Any]) -> list[Any]:
        if not value:
            raise fail("an empty list", rule="a setup has capacity and teams", fix="add one")
        return value

    def capacity_named(self, name: str) -> Capacity:
        """The capacity called `name`."""
        return next(c for c in self.capacity if c.name == name)

    def modes(self) -> list[str]:
        """Provisioning modes offered by some capacity, in catalog order."""
        from gkeml_sdk.scheduling.catalog import MODES

        return [m for m in MODES if any(m in c.provisioning for c in self.capacity)]
