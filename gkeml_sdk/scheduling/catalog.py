"""How GKE provisions nodes, one row per mode: the node labels and taints of such nodes, the
price model, and the Kueue admission path (https://cloud.google.com/kubernetes-engine/docs/
concepts/dws, https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gkeml_sdk.scheduling.spot import SPOT_LABEL, SPOT_TAINT_KEY

Mode = Literal["standard", "spot", "flex-start", "queued"]
# The ways a capacity (or a job with a capacity order) may be had, in the usual preference
# order: reserved VMs first (already paid for), then on-demand, Spot, Dynamic Workload Scheduler.
CapacityMode = Literal["reservation", "standard", "spot", "flex-start", "queued"]
MODES: tuple[CapacityMode, ...] = ("reservation", "standard", "spot", "flex-start", "queued")

FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
QUEUED_LABEL = "cloud.google.com/gke-queued"
QUEUED_TAINT_KEY = "cloud.google.com/gke-queued"
# Nodes of a specific reservation, as GKE's node selectors name them (consuming-reservations).
RESERVATION_LABEL = "cloud.google.com/reservation-name"
RESERVATION_PROJECT_LABEL = "cloud.google.com/reservation-project"
RESERVATION_AFFINITY_LABEL = "cloud.google.com/reservation-affinity"
QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# Kueue copies job annotations with this prefix into the ProvisioningRequest's parameters.
PROVREQ_ANNOTATION_PREFIX = "provreq.kueue.x-k8s.io/"
MAX_RUN_DURATION_PARAMETER = "maxRunDurationSeconds"
# Flex-start VMs (and so queued-provisioning nodes) live at most seven days.
DWS_MAX_RUN_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class ProvisioningMode:
    """One way GKE obtains nodes.

    `node_label` is what such nodes carry (pods select it, Kueue flavors match it);
    `taint_key` the NoSchedule taint they carry, with `taint_value` when pods must match a
    value; `price_model` names the column of the price book; `provisioning_class` is the
    ProvisioningRequest class Kueue asks for capacity with, when the mode goes through one.

    Example:
        >>> mode("queued").provisioning_class, mode("flex-start").price_model
        ('queued-provisioning.gke.io', 'flex-start')
    """

    key: CapacityMode
    node_label: str | None
    taint_key: str | None
    taint_value: str | None
    price_model: str
    provisioning_class: str | None = None
    max_run_seconds: int | None = None
    # All nodes of a request come at once, so a gang never waits on its last node.
    atomic: bool = False
    # GKE taints such nodes itself (queued provisioning); otherwise the node pool request
    # carries the taint (Spot), so that only pods which tolerate it land there.
    gke_taints: bool = False

    @property
    def dws(self) -> bool:
        """True for Dynamic Workload Scheduler capacity (flex-start, queued)."""
        return self.max_run_seconds is not None

    def node_labels(self, value: str = "true") -> dict[str, str]:
        """Labels GKE puts on nodes of this mode (`value`: the reservation's name)."""
        return {self.node_label: value} if self.node_label else {}

    def tolerations(self) -> list[dict[str, str]]:
        """Tolerations of the taint GKE puts on nodes of this mode."""
        if self.taint_key is None:
            return []
        if self.taint_value is None:
            return [{"key": self.taint_key, "operator": "Exists", "effect": "NoSchedule"}]
        return [
            {
                "key": self.taint_key,
                "operator": "Equal",
                "value": self.taint_value,
                "effect": "NoSchedule",
            }
        ]


PROVISIONING: tuple[ProvisioningMode, ...] = (
    # Reserved VMs are billed whether used or not, at the on-demand (or committed-use) rate.
    ProvisioningMode("reservation", RESERVATION_LABEL, None, None, "on-demand"),
    ProvisioningMode("standard", None, None, None, "on-demand"),
    ProvisioningMode("spot", SPOT_LABEL, SPOT_TAINT_KEY, "true", "spot"),
    ProvisioningMode(
        "flex-start",
        FLEX_START_LABEL,
        None,
        None,
        "flex-start",
        max_run_seconds=DWS_MAX_RUN_SECONDS,
    ),
    ProvisioningMode(
        "queued",
        QUEUED_LABEL,
        QUEUED_TAINT_KEY,
        None,
        "flex-start",
        provisioning_class=QUEUED_PROVISIONING_CLASS,
        max_run_seconds=DWS_MAX_RUN_SECONDS,
        atomic=True,
        gke_taints=True,
    ),
)


def mode(key: str) -> ProvisioningMode:
    """The row of provisioning mode `key`."""
    return next(m for m in PROVISIONING if m.key == key)
