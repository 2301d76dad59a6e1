"""`ClusterSetup`: the Kueue objects a platform team creates once, declared as the kinds of
nodes the cluster offers and the quota of each team (https://kueue.sigs.k8s.io/docs/concepts/)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import Field, field_validator, model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, SpecModel, fail
from gkeml_sdk.core.quantity import check_quantity
from gkeml_sdk.core.rules import check_name
from gkeml_sdk.core.spec_text import read_spec_file
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.choice import HardwareChoice, hardware_from_data
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.scheduling.catalog import Mode, mode

if TYPE_CHECKING:
    from gkeml_sdk.core.manifests import Manifests


class PoolOffer(Protocol):
    """What a node pool (`gkeml_sdk.NodePool`) tells Kueue: its hardware and how its VMs
    are provisioned."""

    @property
    def hardware(self) -> Accelerator | TpuSlice: ...

    @property
    def spot(self) -> bool: ...

    @property
    def provisioning(self) -> Mode: ...


class Capacity(SpecModel):
    """One kind of node the cluster offers, and the ways GKE may provision it. `topology`:
    the nodes carry GKE's topology labels (A3 and newer), so its flavors serve Kueue's
    Topology-Aware Scheduling.

    Example:
        >>> Capacity(accelerator=Accelerator("h100", count=8), provisioning=["queued"]).name
        'h100'
    """

    accelerator: HardwareChoice
    provisioning: tuple[Mode, ...] = ("standard",)
    name: str = ""  # derived: the GPU model (and MIG profile), or TPU generation and topology
    topology: bool = False

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        accelerator = hardware_from_data(data.get("accelerator"))
        if "accelerator" in data:
            data["accelerator"] = accelerator
        if not data.get("name") and isinstance(accelerator, Accelerator):
            # MIG nodes are other nodes (their partition label), so another flavor and name.
            mig = f"-{accelerator.mig.replace('.', '-')}" if accelerator.mig else ""
            data["name"] = accelerator.model + mig
        elif not data.get("name") and isinstance(accelerator, TpuSlice):
            data["name"] = f"{accelerator.generation}-{accelerator.topology}"
        return data

    @model_validator(mode="after")
    def _check(self) -> Capacity:
        check_name("capacity name", self.name, DNS1123_LABEL, 40)
        if not self.provisioning or len(set(self.provisioning)) != len(self.provisioning):
            raise fail(
                f"capacity {self.name!r}: provisioning={list(self.provisioning)}",
                rule="each capacity lists its provisioning modes once, at least one",
                fix="provisioning=['standard'] or e.g. ['standard', 'spot', 'queued']",
                field="provisioning",
            )
        tpu = self.accelerator if isinstance(self.accelerator, TpuSlice) else None
        dws = [m for m in self.provisioning if mode(m).dws]
        if tpu is not None and dws and not tpu.tpu.flex_start:
            raise fail(
                f"capacity {self.name!r}: {dws[0]} with {tpu}",
                rule=f"Dynamic Workload Scheduler does not offer {tpu.tpu.display}",
                fix="provisioning=['standard', 'spot'], or TPU v5e, v5p or v6e",
                field="provisioning",
            )
        if tpu is not None and tpu.multi_host and "flex-start" in self.provisioning:
            raise fail(
                f"capacity {self.name!r}: flex-start with multi-host {tpu}",
                rule="flex-start alone creates single-host TPU nodes; a multi-host slice comes "
                "whole through queued provisioning",
                fix="provisioning=['queued']",
                field="provisioning",
            )
        return self

    @classmethod
    def from_node_pools(
        cls, pools: Iterable[PoolOffer], *, topology: bool = False
    ) -> list[Capacity]:
        """One capacity per kind of hardware among `pools`, offered in each provisioning mode
        of its pools, so the flavors select exactly the nodes those pools create.

        Example:
            >>> from gkeml_sdk import NodePool
            >>> h100 = Accelerator("h100", count=8)
            >>> pools = [NodePool(name="h100-spot", hardware=h100, spot=True),
            ...          NodePool(name="h100-dws", hardware=h100, provisioning="queued")]
            >>> (h100_capacity,) = Capacity.from_node_pools(pools)
            >>> h100_capacity.name, h100_capacity.provisioning
            ('h100', ('spot', 'queued'))
        """
        from gkeml_sdk.scheduling.catalog import MODES
        from gkeml_sdk.scheduling.rules import capacity_mode

        # Pools whose nodes a flavor cannot tell apart (h100 x4 and x8 machines carry the same
        # labels) are one capacity: grouped by the capacity name, the first pool's hardware.
        hardware: dict[str, Accelerator | TpuSlice] = {}
        modes: dict[str, set[Mode]] = {}
        for pool in pools:
            name = cls(accelerator=pool.hardware).name
            hardware.setdefault(name, pool.hardware)
            modes.setdefault(name, set()).add(capacity_mode(pool.spot, pool.provisioning))
        return [
            cls(accelerator=hardware[name], provisioning=tuple(m for m in MODES if m in found),
                topology=topology)
            for name, found in modes.items()
        ]  # fmt: skip

    def flavor(self, provisioning: str) -> str:
        """Name of the ResourceFlavor of this capacity provisioned that way."""
        return f"{self.name}-{provisioning}"


class Team(SpecModel):
    """A team: its namespaces, and its nominal quota of each capacity, in the units its pods
    request (GPUs, MIG slices or TPU chips), for every provisioning mode of that capacity.
    `borrowing_limit`: how many more it may borrow from the cohort (None: any idle quota).

    Example:
        >>> Team(name="team-a", quota={"h100": 16}).namespaces
        ('team-a',)
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
    LocalQueues per team and mode in one cohort, WorkloadPriorityClasses, the
    ProvisioningRequest admission check for queued provisioning, and a TAS Topology.

    Example:
        >>> setup = ClusterSetup(
        ...     capacity=[Capacity(accelerator=Accelerator("h100", count=8),
        ...                        provisioning=["standard", "queued"])],
        ...     teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16})])
        >>> queues = setup.compile().of_kind("LocalQueue")
        >>> print(*(queue.get("metadata", {}).get("name") for queue in queues))
        team-a team-a-queued
    """

    capacity: list[Capacity]
    teams: list[Team]
    cohort: str = "gkeml"
    priorities: dict[str, int] = Field(default_factory=dict)
    # Kueue preemption: take back lent quota from any borrower, preempt lower priorities in
    # the team's own queue and, while borrowing, lower priorities elsewhere in the cohort.
    reclaim_within_cohort: str = "Any"
    within_cluster_queue: str = "LowerPriority"
    borrow_within_cohort: str = "LowerPriority"
    queued_retries: int = 3  # new ProvisioningRequests after a failed one, then deactivated

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

    def compile(self) -> Manifests:
        """The Kueue objects, in the order they can be applied."""
        from gkeml_sdk.setup.manifests import compile_setup

        return compile_setup(self)
