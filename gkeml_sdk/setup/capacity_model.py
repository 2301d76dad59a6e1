"""`Capacity`: one kind of node the cluster offers and the modes GKE may provision it in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, cast

from pydantic import Field, model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, SpecModel, fail
from gkeml_sdk.core.rules import check_name
from gkeml_sdk.hardware.accelerator import Accelerator
from gkeml_sdk.hardware.choice import HardwareChoice, hardware_from_data
from gkeml_sdk.hardware.tpu_slice import TpuSlice
from gkeml_sdk.scheduling.catalog import MODES, CapacityMode, Mode, mode
from gkeml_sdk.scheduling.reservation import Reservation, reservation_of
from gkeml_sdk.scheduling.rules import capacity_mode, check_capacity_mode


class PoolOffer(Protocol):
    """What a node pool (`gkeml_sdk.NodePool`) tells Kueue: its hardware and how its VMs
    are provisioned."""

    @property
    def hardware(self) -> Accelerator | TpuSlice: ...

    @property
    def spot(self) -> bool: ...

    @property
    def provisioning(self) -> Mode: ...

    @property
    def reservation(self) -> str | None: ...


class Capacity(SpecModel):
    """One kind of node the cluster offers, and the ways GKE may provision it, in the order
    Kueue should try them (`ClusterSetup(queues="ordered")`).

    Example:
        >>> Capacity(accelerator=Accelerator("h100", count=8), provisioning=["queued"]).name
        'h100'
        >>> Capacity(accelerator=Accelerator("h100", count=8), reservation="h100-res",
        ...          provisioning=["standard", "spot"]).provisioning
        ('reservation', 'standard', 'spot')
    """

    accelerator: HardwareChoice = Field(
        description="The hardware of the nodes: `Accelerator(...)` or `TpuSlice(...)`."
    )
    provisioning: tuple[CapacityMode, ...] = Field(
        default=("standard",),
        description='Modes its node pools offer, in the order Kueue tries them: "standard", '
        '"spot", "flex-start", "queued" ("reservation" comes first with a reservation).',
    )
    name: str = Field(
        default="",
        description='The capacity\'s name in quotas; "": the GPU model (and MIG profile) or the '
        "TPU generation and topology.",
    )
    topology: bool = Field(
        default=False,
        description="Its nodes carry GKE's topology labels (A3 and newer), so its flavors "
        "serve Kueue's Topology-Aware Scheduling.",
    )
    reservation: str | None = Field(
        default=None,
        description="A specific Compute Engine reservation its nodes consume, tried first.",
    )
    reservation_project: str | None = Field(
        default=None, description="The project that owns a shared reservation (None: this one)."
    )
    gpudirect_vpc: str | None = Field(
        default=None,
        description="The prefix of GPUDirect VPCs made by hand, named `<prefix>-<network>`, whose "
        "GKE Network objects `gkeml setup` writes (None: the node pools' accelerator network "
        "profile brings them up).",
    )

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        accelerator = hardware_from_data(data.get("accelerator"))
        if "accelerator" in data:
            data["accelerator"] = accelerator
        if not data.get("name") and isinstance(accelerator, Accelerator | TpuSlice):
            data["name"] = accelerator.capacity_name
        modes = tuple(data.get("provisioning") or ("standard",))
        if data.get("reservation") and "reservation" not in modes:
            data["provisioning"] = ("reservation", *modes)
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
        if ("reservation" in self.provisioning) != (self.reservation is not None):
            raise fail(
                f"capacity {self.name!r}: provisioning={list(self.provisioning)} with "
                f"reservation={self.reservation!r}",
                rule="the reservation mode consumes one named reservation",
                fix="reservation='NAME' (it is then tried first), or drop 'reservation'",
                field="reservation",
            )
        self.reserved  # noqa: B018 - raises SpecError for a name Compute Engine refuses
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
        # DWS modes only: a capacity may stand for several machine shapes (h100 x4 and x8),
        # so on-demand availability is the pools' to check.
        for each in (cast(Mode, m) for m in self.provisioning if mode(m).dws):
            check_capacity_mode(self.accelerator, each, spot=False)
        return self

    @classmethod
    def from_node_pools(
        cls, pools: Iterable[PoolOffer], *, topology: bool = False
    ) -> list[Capacity]:
        """One capacity per kind of hardware among `pools`, offered in each provisioning mode
        of its pools (in the catalog's preference order), so the flavors select exactly the
        nodes those pools create.

        Example:
            >>> from gkeml_sdk import NodePool
            >>> h100 = Accelerator("h100", count=8)
            >>> pools = [NodePool(name="h100-spot", hardware=h100, spot=True),
            ...          NodePool(name="h100-dws", hardware=h100, provisioning="queued")]
            >>> (h100_capacity,) = Capacity.from_node_pools(pools)
            >>> h100_capacity.name, h100_capacity.provisioning
            ('h100', ('spot', 'queued'))
        """
        # Pools whose nodes a flavor cannot tell apart (h100 x4 and x8 machines carry the same
        # labels) are one capacity: grouped by the capacity name, the first pool's hardware.
        hardware: dict[str, Accelerator | TpuSlice] = {}
        modes: dict[str, set[CapacityMode]] = {}
        reserved: dict[str, str] = {}
        for pool in pools:
            name = cls(accelerator=pool.hardware).name
            hardware.setdefault(name, pool.hardware)
            found: CapacityMode = capacity_mode(pool.spot, pool.provisioning)
            if pool.reservation is not None:
                found = "reservation"
                reserved.setdefault(name, pool.reservation)
            modes.setdefault(name, set()).add(found)
        return [
            cls(accelerator=hardware[name], provisioning=tuple(m for m in MODES if m in offered),
                topology=topology, reservation=reserved.get(name))
            for name, offered in modes.items()
        ]  # fmt: skip

    @property
    def reserved(self) -> Reservation | None:
        """The specific reservation of the `reservation` mode, if any."""
        if self.reservation is None:
            return None
        return reservation_of(self.reservation, self.reservation_project)

    def flavor(self, provisioning: str) -> str:
        """Name of the ResourceFlavor of this capacity provisioned that way."""
        return f"{self.name}-{provisioning}"
