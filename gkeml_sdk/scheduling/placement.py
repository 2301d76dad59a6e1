"""Where a job's pods land relative to each other: Kueue Topology-Aware Scheduling levels and
JobSet exclusive placement (https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.scheduling.topology import (
    COMPACT_LEVEL,
    EXCLUSIVE,
    LEVELS,
    SINGLE_MACHINE_LEVELS,
    TOPOLOGY_ANNOTATION_PREFIX,
)

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


class TopologyPlacement(SpecModel):
    """Keep a job's pods within one topology domain (`level`): `"required"` or only
    `"preferred"` (Kueue climbs to wider levels, then spreads). `exclusive` gives each child
    Job of a JobSet a node pool or rack of its own.

    Levels: `block`, `subblock`, `host`, `hostname` (or their node labels).

    Example:
        >>> TopologyPlacement(level="cloud.google.com/gce-topology-block", mode="required").level
        'block'
    """

    level: str = Field(
        description='The topology level the pods share: "block", "subblock", "host" or a node '
        "label."
    )
    mode: Literal["preferred", "required"] = Field(
        "preferred",
        description='"preferred" (as close as Kueue can) or "required" (all within one such '
        "level).",
    )
    exclusive: Literal["nodepool", "block", "subblock"] | None = Field(
        None, description='Keep the job alone in a "nodepool", "block" or "subblock"; None: share.'
    )

    def __init__(self, level: str | None = None, /, **data: Any) -> None:
        if level is not None:
            data["level"] = level
        super().__init__(**data)

    @field_validator("level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        for name, label in LEVELS:
            if value in (name, label):
                return name
        raise fail(
            f"placement level {value!r} is not a GKE topology level",
            rule="Kueue places pods by the topology labels GKE puts on nodes",
            fix="level= one of " + ", ".join(f"{n!r} ({label})" for n, label in LEVELS),
            field="placement",
        )


Placement = Literal["compact"] | TopologyPlacement


def resolved(placement: Placement | None) -> TopologyPlacement | None:
    """The `TopologyPlacement` a placement stands for (`"compact"` = preferred at host level).

    Example:
        >>> resolved("compact")
        TopologyPlacement(level='host', mode='preferred', exclusive=None)
    """
    if placement == "compact":
        return TopologyPlacement(level=COMPACT_LEVEL)
    return placement if isinstance(placement, TopologyPlacement) else None


def exclusive_label(job: TrainingJobFields) -> str | None:
    """The node label each child Job of `job` keeps to itself, if any."""
    placement = resolved(job.placement)
    if placement is not None and placement.exclusive is not None:
        return dict(EXCLUSIVE)[placement.exclusive]
    return job.hardware.exclusive_topology


def check_placement(job: TrainingJobFields) -> None:
    """Raise `SpecError` when the placement cannot hold `job`'s pods."""
    placement = resolved(job.placement)
    if placement is None:
        return
    own = sorted(k for k in job.annotations if k.startswith(TOPOLOGY_ANNOTATION_PREFIX))
    if own:
        raise fail(
            f"placement= with annotation {own[0]!r}",
            rule="Kueue reads one topology annotation per pod template and its webhook "
            "refuses a second",
            fix=f"drop {own[0]!r} from annotations and keep placement=, or the reverse",
            field="placement",
        )
    _check_topology_labels(job, placement)
    one_machine = placement.level in SINGLE_MACHINE_LEVELS
    if placement.mode == "required" and one_machine and job.nodes > 1:
        raise fail(
            f"placement level {placement.level!r} required for {job.nodes} nodes",
            rule="a required level puts every pod in one domain, and one "
            f"{placement.level} is one machine, which holds one node's pod",
            fix="mode='preferred', or level='subblock' / 'block'",
            field="placement",
        )
    if placement.exclusive is None:
        return
    if not job.uses_jobset:
        raise fail(
            f"exclusive={placement.exclusive!r} on a single-pod job",
            rule="exclusive placement is a JobSet annotation (alpha.jobset.sigs.k8s.io/"
            "exclusive-topology); a single-node job compiles to a batch Job",
            fix="drop exclusive=, or gang=True / nodes > 1",
            field="placement",
        )
    fixed = job.hardware.exclusive_topology
    wanted = dict(EXCLUSIVE)[placement.exclusive]
    if fixed is not None and fixed != wanted:
        raise fail(
            f"exclusive={placement.exclusive!r} with {job.accelerator}",
            rule=f"each multi-host TPU slice is one node pool, so its Job keeps {fixed} to itself",
            fix="exclusive='nodepool' or leave it unset",
            field="placement",
        )


def _check_topology_labels(job: TrainingJobFields, placement: TopologyPlacement) -> None:
    from gkeml_sdk.hardware.gpus import GPUS, carries_topology

    if placement.level == "hostname":
        return  # every node carries kubernetes.io/hostname
    if job.accelerator is None:
        return
    machine = job.accelerator.pool_shape().machine_type
    # TPU machine types have no GPU row: which TPU nodes carry the labels is not checked.
    if carries_topology(machine) is not False:
        return
    with_labels = [g.key for g in GPUS if any(m.topology for m in g.machine_types)]
    raise fail(
        f"placement at level {placement.level!r} on {job.accelerator} ({machine})",
        rule="Kueue's Topology-Aware Scheduling places pods by GKE's gce-topology labels, "
        "which only A3-and-newer GPU nodes carry; Kueue never admits such a job elsewhere "
        '("does not support TopologyAwareScheduling")',
        fix="drop placement=, or level='hostname', or one of " + ", ".join(with_labels),
        field="placement",
    )
