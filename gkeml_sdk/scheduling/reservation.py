"""A Compute Engine reservation as GKE consumes it: a specific reservation of this project or
one shared from another project, named to node pools by reservation affinity and to pods and
Kueue flavors by node labels (https://cloud.google.com/kubernetes-engine/docs/how-to/
consuming-reservations)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gkeml_sdk.core.model import DNS1035_LABEL, fail
from gkeml_sdk.scheduling.catalog import (
    RESERVATION_AFFINITY_LABEL,
    RESERVATION_LABEL,
    RESERVATION_PROJECT_LABEL,
)

# A shared reservation by path: projects/OWNER/reservations/NAME (gcloud --reservation).
_SHARED = re.compile(r"^projects/([^/]+)/reservations/([^/]+)\Z")
# Project IDs: 6 to 30 lowercase letters, digits or hyphens, a letter first.
_PROJECT = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]\Z")


@dataclass(frozen=True, slots=True)
class Reservation:
    """A specific reservation: its `name`, and the `project` that owns it when it is shared
    from another project (None: the cluster's project).

    Example:
        >>> r = reservation_of("projects/owner-proj/reservations/h100-block")
        >>> r.name, r.project, r.affinity_value
        ('h100-block', 'owner-proj', 'projects/owner-proj/reservations/h100-block')
    """

    name: str
    project: str | None = None

    @property
    def affinity_value(self) -> str:
        """The value of a node pool's SPECIFIC_RESERVATION affinity."""
        if self.project is None:
            return self.name
        return f"projects/{self.project}/reservations/{self.name}"

    def node_labels(self) -> dict[str, str]:
        """The node selector of pods (and labels of nodes) that consume this reservation.

        Example:
            >>> Reservation("r1").node_labels()  # doctest: +NORMALIZE_WHITESPACE
            {'cloud.google.com/reservation-name': 'r1',
             'cloud.google.com/reservation-affinity': 'specific'}
        """
        labels = {RESERVATION_LABEL: self.name, RESERVATION_AFFINITY_LABEL: "specific"}
        if self.project is not None:
            labels[RESERVATION_PROJECT_LABEL] = self.project
        return labels


def reservation_of(
    value: str, project: str | None = None, field: str = "reservation"
) -> Reservation:
    """The `Reservation` that `value` names ("NAME", or "projects/OWNER/reservations/NAME"),
    owned by `project` when given; `SpecError` for a name Compute Engine would refuse.

    Example:
        >>> reservation_of("a3-res", project="shared-capacity").affinity_value
        'projects/shared-capacity/reservations/a3-res'
    """
    name = value
    shared = _SHARED.match(value)
    if shared:
        owner, name = shared.groups()
        if project is not None and project != owner:
            raise fail(
                f"{field}={value!r} with {field}_project={project!r}",
                rule="a shared reservation has one owner project",
                fix=f"{field}={name!r}, {field}_project={owner!r}",
                field=field,
            )
        project = owner
    if len(name) > 63 or not DNS1035_LABEL.match(name):
        raise fail(
            f"{field}={value!r} is not a reservation name",
            rule="Compute Engine names are 1-63 lowercase letters, digits or hyphens, a letter "
            "first (a shared one: projects/OWNER/reservations/NAME)",
            fix=f"{field}='my-reservation'",
            field=field,
        )
    if project is not None and not _PROJECT.match(project):
        raise fail(
            f"{field}_project={project!r} is not a project ID",
            rule="project IDs are 6-30 lowercase letters, digits or hyphens, a letter first",
            fix=f"{field}_project='owner-project'",
            field=f"{field}_project",
        )
    return Reservation(name, project)


def check_reserved_machine(reservation: Reservation, reserved: str, wanted: str) -> None:
    """Raise `SpecError` when `reservation` holds VMs of machine type `reserved` but the job
    or pool runs on `wanted`: GKE would never create its nodes from it.

    Example:
        >>> check_reserved_machine(Reservation("r1"), "a3-highgpu-8g", "a3-megagpu-8g")
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: reservation 'r1' holds a3-highgpu-8g VMs, ...
    """
    if reserved and reserved != wanted:
        raise fail(
            f"reservation {reservation.name!r} holds {reserved} VMs, not {wanted}",
            rule="nodes consume a specific reservation only when their machine type is the "
            "reservation's",
            fix=f"an accelerator on {reserved}, or a reservation of {wanted}",
            field="reservation",
        )
