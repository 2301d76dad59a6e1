"""`ReservationCheck`: before a job or node pool consumes a specific reservation, read the
reservation through `google-cloud-compute` and refuse it when it holds another machine type."""

from __future__ import annotations

from typing import Any

from gkeml_sdk.backends.gke.api_errors import as_gke_error
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.hardware.choice import HardwareChoice
from gkeml_sdk.scheduling.reservation import Reservation, check_reserved_machine


class ReservationCheck:
    """Reservations of `project` (or their owner project when shared) in `zone`.

    Example:
        >>> check = ReservationCheck("my-project", "us-central1-a")  # doctest: +SKIP
        >>> check.machine_type(Reservation("h100-res"))  # doctest: +SKIP
        'a3-highgpu-8g'
    """

    def __init__(
        self,
        project: str,
        zone: str,
        *,
        credentials: Any = None,
        client_options: dict[str, Any] | None = None,
        client: Any = None,
    ) -> None:
        self.project, self.zone = project, zone
        if client is None:
            from google.cloud import compute_v1

            client = compute_v1.ReservationsClient(
                credentials=credentials, transport="rest", client_options=client_options
            )
        self.client = client

    def machine_type(self, reservation: Reservation) -> str:
        """The machine type the reservation's VMs are (its specific SKU)."""
        from google.api_core import exceptions as api

        owner = reservation.project or self.project
        action = f"read reservation {reservation.affinity_value} in {self.zone}"
        try:
            found = self.client.get(project=owner, zone=self.zone, reservation=reservation.name)
        except api.NotFound:
            raise ConfigError(
                f"reservation {reservation.name!r} does not exist in project {owner}, zone "
                f"{self.zone}: check the name (gcloud compute reservations list), or the "
                "owner project of a shared one (reservation_project=)"
            ) from None
        except Exception as exc:
            raise as_gke_error(action, exc) or exc from None
        return str(found.specific_reservation.instance_properties.machine_type).rsplit("/", 1)[-1]

    def check(self, reservation: Reservation, hardware: HardwareChoice) -> None:
        """Raise `SpecError` when the reservation's machine type is not `hardware`'s."""
        check_reserved_machine(
            reservation, self.machine_type(reservation), hardware.pool_shape().machine_type
        )
