"""Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does:
acquire a free or expired lease, renew it every `retry_seconds` (one update over the version
it wrote; a read only when that update conflicts), give up leading when a
renewal has not succeeded for `renew_deadline_seconds`. Expiry is judged by when this
process last saw the lease change, never by another machine's clock; our own renewal counts
from when its request was sent, so a slow answer never extends what we believe we hold.
`fence()` is that local belief only (no read): a leader that stops leading stops within its
renew deadline, before anyone may take over, and what a delayed write could still do is
refused by the write's own precondition (resourceVersion, uid, a taken name)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.rules import INT32_MAX, check_number
from gkeml_sdk.errors import ClusterError, NotFoundError, SpecError

log = logging.getLogger(__name__)
LEASES = resource(kinds.COORDINATION, "Lease")


class LeaseLost(ClusterError):
    """This process no longer holds its Lease, so it must not write: another leader may be
    acting on the same objects.

    Example:
        >>> str(LeaseLost("lease default/gkeml-controller", message="held by b"))
        'lease default/gkeml-controller: held by b'
    """


@dataclass(frozen=True)
class LeaseTiming:
    """client-go's defaults are 15 s / 10 s / 2 s; the lease duration is whole seconds.

    Example:
        >>> LeaseTiming().lease_seconds
        15
    """

    lease_seconds: int = 15
    renew_deadline_seconds: float = 10.0
    retry_seconds: float = 2.0

    def __post_init__(self) -> None:
        # As client-go's NewLeaderElector: every period positive, the deadline within the lease.
        check_number("lease_seconds", self.lease_seconds, low=1, high=INT32_MAX, integer=True)
        check_number("renew_deadline_seconds", self.renew_deadline_seconds, above=True)
        check_number("retry_seconds", self.retry_seconds, above=True)
        if self.renew_deadline_seconds >= self.lease_seconds:
            raise SpecError(
                f"renew_deadline_seconds={self.renew_deadline_seconds:g} with "
                f"lease_seconds={self.lease_seconds}",
                rule="a leader gives up before its lease expires (leaseDuration > renewDeadline)",
                fix=f"renew_deadline_seconds={self.lease_seconds * 2 / 3:g}",
            )


# The standby manager's: a successor takes over within about 2.5 s of the leader's last
# renewal (duration + one retry), so tier A's 5 s objective holds when the leader dies with a
# primary. A leader that cannot renew for 1.5 s stops writing, 0.5 s before anyone may take
# over.
STANDBY_LEASE = LeaseTiming(lease_seconds=2, renew_deadline_seconds=1.5, retry_seconds=0.5)


class LeaderElector:
    """One candidate for the lease `name` in `namespace`.

    Example:
        >>> elector = LeaderElector(kube, "default", "gkeml-standby", "me")  # doctest: +SKIP
        >>> elector.try_acquire_or_renew()  # doctest: +SKIP
        True
    """

    def __init__(
        self,
        kube: KubeClient,
        namespace: str,
        name: str,
        identity: str,
        timing: LeaseTiming | None = None,
        clock: Callable[[], float] = time.monotonic,
        *,
        annotations: dict[str, str] | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.kube, self.namespace, self.name, self.identity = kube, namespace, name, identity
        self.timing = timing or LeaseTiming()
        self._clock = clock
        self._wall = wall  # only for the renewTime others read, never for our own judgement
        self.annotations = dict(annotations or {})  # what the Lease tells its readers
        self._written_rv = ""  # the Lease's resourceVersion after our last renewal
        self._observed: Obj | None = None  # last lease spec seen
        self._observed_at = 0.0  # local time it was first seen in that form
        self.last_renewed = float("-inf")  # local time of our last successful write

    @property
    def leading(self) -> bool:
        """True while our last renewal is younger than the renew deadline."""
        return self._clock() - self.last_renewed < self.timing.renew_deadline_seconds

    @property
    def term(self) -> int:
        """How many times the lease changed hands when we took it (`leaseTransitions`): a
        number every write of this leadership may carry, higher than any predecessor's."""
        return int((self._observed or {}).get("leaseTransitions") or 0)

    @property
    def holder(self) -> str:
        """The identity last seen holding the lease ("" when none)."""
        return str((self._observed or {}).get("holderIdentity") or "")

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True when we hold the lease afterwards."""
        try:
            return self._attempt()
        except ClusterError as exc:
            log.info("lease %s/%s: %s", self.namespace, self.name, exc)
            return False

    def fence(self) -> str:
        """Raise `LeaseLost` unless our last renewal is younger than the renew deadline;
        return the Lease's resourceVersion as that renewal wrote it. No request: call it
        right before each write (a paused process resumes past this check, so every write
        also carries its own precondition)."""
        if not self.leading:
            raise LeaseLost(
                f"lease {self.namespace}/{self.name}",
                message="our last renewal is older than the renew deadline",
            )
        return self._written_rv

    def release(self) -> None:
        """Give the lease up at once (on a clean stop), so another candidate need not wait."""
        current = self.kube.find(LEASES, self.name, self.namespace)
        if current is None or current.get("spec", {}).get("holderIdentity") != self.identity:
            return
        spec = {**current["spec"], "holderIdentity": "", "leaseDurationSeconds": 1}
        self.kube.replace({**current, "spec": spec})
        self.last_renewed = float("-inf")

    def _attempt(self) -> bool:
        sent = self._clock()
        now_text = _micro_time(self._wall())
        if self.leading and self.holder == self.identity and self._written_rv:
            # Renewing what we hold: one update over the version we wrote, as client-go's
            # elector does; a 409 (someone else wrote it) or 404 reads it as below.
            held = self._observed or {}
            lease = self._lease(now_text, self.term, str(held.get("acquireTime") or now_text))
            lease["metadata"]["resourceVersion"] = self._written_rv
            try:
                written = self.kube.replace(lease)
            except NotFoundError:
                written = None
            if written is not None:
                return self._won(written, sent)
        current = self.kube.find(LEASES, self.name, self.namespace)
        if current is None:
            created = self.kube.create(self._lease(now_text, transitions=0))
            return self._won(created, sent)
        spec = current.get("spec") or {}
        if spec != self._observed:
            self._observed, self._observed_at = spec, self._clock()
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.timing.lease_seconds)
        if holder and holder != self.identity and self._clock() < self._observed_at + duration:
            return False  # held by another candidate that renewed within its duration
        transitions = int(spec.get("leaseTransitions") or 0) + int(holder != self.identity)
        acquired = spec.get("acquireTime") if holder == self.identity else now_text
        lease = self._lease(now_text, transitions, acquired)
        lease["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        return self._won(self.kube.replace(lease), sent)

    def _won(self, written: Obj | None, sent: float) -> bool:
        if written is None:
            return False  # another candidate wrote first (409)
        self._observed, self._observed_at = written.get("spec"), self._clock()
        self._written_rv = str((written.get("metadata") or {}).get("resourceVersion") or "")
        self.last_renewed = sent
        return True

    def _lease(self, now_text: str, transitions: int, acquired: str | None = None) -> Obj:
        return {
            "apiVersion": kinds.COORDINATION,
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                **({"annotations": self.annotations} if self.annotations else {}),
            },
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.timing.lease_seconds,
                "acquireTime": acquired or now_text,
                "renewTime": now_text,
                "leaseTransitions": transitions,
            },
        }


def _micro_time(seconds: float) -> str:
    """A MicroTime as the API server writes it."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
