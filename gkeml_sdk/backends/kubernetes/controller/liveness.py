"""Is a run controller acting in a namespace? The one that leads holds the Lease
`gkeml-run-controller` there and renews it within its duration; a client that follows a run
then defers to it instead of resubmitting itself."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from gkeml_sdk.backends.kubernetes.kube import KubeClient
from gkeml_sdk.backends.kubernetes.lease import LEASES

LEASE_NAME = "gkeml-run-controller"


def controller_alive(
    kube: KubeClient, namespace: str, clock: Callable[[], float] = time.time
) -> bool:
    """True when the namespace's controller Lease has a holder whose last renewal is younger
    than the Lease's duration. One read, so it compares the holder's renewTime with this
    machine's clock (a follower cannot wait a whole duration to see the Lease change).

    Example:
        >>> controller_alive(kube, "ml")  # doctest: +SKIP
        False
    """
    lease = kube.find(LEASES, LEASE_NAME, namespace)
    spec = (lease or {}).get("spec") or {}
    renewed = _seconds(str(spec.get("renewTime") or ""))
    if not spec.get("holderIdentity") or renewed is None:
        return False
    return clock() < renewed + float(spec.get("leaseDurationSeconds") or 0)


def _seconds(micro_time: str) -> float | None:
    try:
        return datetime.fromisoformat(micro_time.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
