"""`ClusterSetup`: the Kueue objects a platform team creates once, declared as the kinds of
nodes the cluster offers and the quota of each team (https://kueue.sigs.k8s.io/docs/concepts/)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, SpecModel, fail
from gkeml_sdk.core.quantity import check_quantity
from gkeml_sdk.core.rules import check_name
from gkeml_sdk.core.spec_text import read_spec_file
from gkeml_sdk.setup.capacity_model import Capacity
from gkeml_sdk.setup.multikueue import WorkerCluster

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests
    from gkeml_sdk.runs.explain.explanation import Preview
    from gkeml_sdk.training.model import TrainingJob


class Team(SpecModel):
    """A team: its namespaces, and its nominal quota of each capacity, in the units its pods
    request (GPUs, MIG slices or TPU chips), for every provisioning mode of that capacity.
    `borrowing_limit`: how many more it may borrow from the cohort (None: any idle quota).

    Example:
        >>> Team(name="team-a", quota={"h100": 16}).namespaces
        ('team-a',)

    Attributes:
        name: The team's name: its ClusterQueue and LocalQueues are named after it.
        namespaces: The team's namespaces; empty: one namespace named after the team.
        quota: Accelerators the team may use at once: capacity name -> units pods request.
        borrowing_limit: Units it may borrow from the cohort beyond its quota; None: no limit.
        cpu: CPU quota of the team's queues (a quantity).
        memory: Memory quota of the team's queues (a quantity).
    """

    name: str
    namespaces: tuple[str, ...] = ()  # default: one namespace named after the team
    quota: dict[str, int] = Field(default_factory=dict)
    borrowing_limit: int | None = None
    # CPU and memory are covered so that pods which request them can be admitted; accelerators
    # are what the quota really limits (XPK's defaults are the same kind of ceiling).
    cpu: str = "10000"
    memory: str = "10000Gi"

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
        numbers = {**self.quota, "borrowing_limit": self.borrowing_limit or 0}
        for key, value in numbers.items():
            if value < 0:
                raise fail(f"team {self.name!r}: {key}={value}", fix="a count >= 0", field=key)
        return self

    def queue(self, provisioning: str) -> str:
        """Name of the team's LocalQueue (and ClusterQueue) for a provisioning mode."""
        return self.name if provisioning == "standard" else f"{self.name}-{provisioning}"


class ClusterSetup(SpecModel):
    """Kueue as code: ResourceFlavors per capacity and provisioning mode, a ClusterQueue and
    LocalQueues per team and mode in one cohort (`queues="ordered"`: one per team, its flavors
    in each capacity's order, Kueue trying the next when one is full), WorkloadPriorityClasses
    (`priorities`; None: low, normal and high), the ProvisioningRequest admission check for
    queued provisioning, and a TAS Topology.

    Example:
        >>> from gkeml_sdk import Accelerator
        >>> setup = ClusterSetup(
        ...     capacity=[Capacity(accelerator=Accelerator("h100", count=8),
        ...                        provisioning=["standard", "queued"])],
        ...     teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16})])
        >>> queues = setup.compile().of_kind("LocalQueue")
        >>> print(*(queue.get("metadata", {}).get("name") for queue in queues))
        team-a team-a-queued

    Attributes:
        capacity: The hardware the cluster's node pools offer: `Capacity(...)` per kind.
        teams: Teams with their namespaces and quota: `Team(...)`, one ClusterQueue each.
        cohort: Kueue cohort of the teams' ClusterQueues, where unused quota is lent.
        priorities: WorkloadPriorityClasses: name -> value; jobs pick one with priority=.
        reclaim_within_cohort: Kueue preemption: take lent quota back from borrowers ("Any").
        within_cluster_queue: Kueue preemption inside a team's queue ("LowerPriority").
        borrow_within_cohort: Kueue preemption while borrowing, elsewhere in the cohort.
        queued_retries: New ProvisioningRequests after a failed one, then deactivated.
        queues: "per-mode": a ClusterQueue per team and mode, picked by queue name;
            "ordered": one per team holding every mode, Kueue picks the first that fits.
        when_can_borrow: Kueue flavorFungibility: try the next flavor rather than borrow.
        when_can_preempt: Kueue flavorFungibility: try the next flavor rather than preempt.
        workers: MultiKueue worker clusters; with them this setup is the manager's.
        nccl_installers: Install the NCCL plugin DaemonSet of each GPUDirect capacity.
    """

    capacity: list[Capacity]
    teams: list[Team]
    cohort: str = "gkeml"
    priorities: dict[str, int] | None = None  # None: DEFAULT_PRIORITIES; {} for none
    # "per-mode": a ClusterQueue per team and mode, jobs pick one by queue name; "ordered":
    # one per team holding every mode, and Kueue's flavor fungibility picks the first that fits.
    queues: Literal["per-mode", "ordered"] = "per-mode"
    # Kueue flavorFungibility: try the next flavor rather than borrow or preempt in this one.
    when_can_borrow: Literal["MayStopSearch", "TryNextFlavor"] = "TryNextFlavor"
    when_can_preempt: Literal["MayStopSearch", "TryNextFlavor"] = "TryNextFlavor"
    # Kueue preemption: take back lent quota from any borrower, preempt lower priorities in
    # the team's own queue and, while borrowing, lower priorities elsewhere in the cohort.
    reclaim_within_cohort: str = "Any"
    within_cluster_queue: str = "LowerPriority"
    borrow_within_cohort: str = "LowerPriority"
    queued_retries: int = 3  # new ProvisioningRequests after a failed one, then deactivated
    # MultiKueue: with workers this setup is the manager's, dispatching to them (for_worker()).
    workers: list[WorkerCluster] = Field(default_factory=list)
    nccl_installers: bool = True  # the NCCL plugin DaemonSet of each GPUDirect capacity

    @field_validator("teams", "capacity")
    @classmethod
    def _not_empty(cls, value: list[Any]) -> list[Any]:
        if not value:
            raise fail("an empty list", rule="a setup has capacity and teams", fix="add one")
        return value

    @model_validator(mode="after")
    def _check(self) -> ClusterSetup:
        from gkeml_sdk.setup.rules import check_setup

        check_setup(self)
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> ClusterSetup:
        """Read a setup from a YAML file (the fields of `ClusterSetup`)."""
        _, text = read_spec_file(
            path, fix="pass the path of a setup file (docs: From an empty cluster to a queued job)"
        )
        return cls.from_yaml(text)

    def capacity_named(self, name: str) -> Capacity:
        """The capacity called `name`."""
        return next(c for c in self.capacity if c.name == name)

    def modes(self) -> list[str]:
        """Provisioning modes offered by some capacity, in catalog order."""
        from gkeml_sdk.scheduling.catalog import MODES

        return [m for m in MODES if any(m in c.provisioning for c in self.capacity)]

    def for_worker(self) -> ClusterSetup:
        """The setup of each worker cluster: the same queues and flavors, without MultiKueue.

        Example:
            >>> from gkeml_sdk import Accelerator
            >>> ClusterSetup(capacity=[Capacity(accelerator=Accelerator("l4"))], workers=[
            ...     WorkerCluster(name="w1")], teams=[Team(name="a", quota={"l4": 4})]
            ...     ).for_worker().workers
            []
        """
        return self.model_copy(update={"workers": []})

    def compile(self) -> Manifests:
        """The Kueue objects, in the order they can be applied."""
        from gkeml_sdk.setup.manifests import compile_setup

        return compile_setup(self)

    def preview(self, job: TrainingJob) -> Preview:
        """What Kueue would do with `job` in a cluster holding this setup and nothing running
        yet: "will it fit?" asked of a setup file, with no cluster.

        Example:
            >>> from gkeml_sdk import Accelerator, TrainingJob
            >>> setup = ClusterSetup(
            ...     capacity=[Capacity(accelerator=Accelerator("h100", count=8))],
            ...     teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16})])
            >>> job = TrainingJob(name="ft", image="img", command=["python", "train.py"],
            ...                   accelerator=Accelerator("h100", count=8), nodes=4,
            ...                   namespace="ml", queue="team-a")
            >>> setup.preview(job).verdict
            <Verdict.NEVER_FITS: 'never fits'>
        """
        from gkeml_sdk.runs.explain.offline import queues_of
        from gkeml_sdk.runs.explain.preview import preview

        queues = queues_of(self.compile().objects, job.namespace, job.queue)
        return preview(job.compile().workload or {}, queues)
