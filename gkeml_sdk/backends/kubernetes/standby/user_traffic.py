"""What users see during a failover: requests routed as the tenant's compiled route routes
them. Each request picks its destination (the primary's or the standby's Service or pool)
once, by the route's weights at that instant, as Envoy does for weighted clusters; its
retries (the VirtualService's `retries.attempts`; none on an HTTPRoute, whose standard
channel has no retries) stay with that destination, as Istio's and the Gateway's do. So
while the route still sends a share to a primary that has no ready pod, that share fails,
however many retries: only moving the route ends the failures. `UserTraffic` counts them;
how one try is sent is the caller's (the drill asks the cluster, the bench a proxy)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.rules import slug
from gkeml_sdk.errors import GkemlError

FAILED = "failed"


def route_split(route: Obj | None, model: str) -> tuple[tuple[str, int], ...]:
    """(destination, weight) of `model`'s rule in a VirtualService or HTTPRoute; the
    destination is the Service (or InferencePool) name, which is the pods' serve label.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> from gkeml_sdk.tenancy.routes import virtual_service
        >>> a = load_specs("examples/tenants.yaml")[0]
        >>> route_split(virtual_service(a), "llama-2-7b")
        (('llama-2-7b', 95), ('llama-2-7b-standby', 5))
    """
    spec = (route or {}).get("spec") or {}
    for rule in spec.get("http") or spec.get("rules") or []:
        if rule.get("name") != slug(model, empty="model"):
            continue
        if "route" in rule:  # Istio: destination.host is the Service's DNS name
            return tuple(
                (str(r["destination"]["host"]).split(".")[0], int(r.get("weight", 1)))
                for r in rule["route"]
            )
        return tuple((str(r["name"]), int(r.get("weight", 1))) for r in rule["backendRefs"])
    return ()


def route_tries(route: Obj | None, model: str) -> int:
    """Tries per request: 1 plus the rule's retry attempts (an HTTPRoute has none)."""
    spec = (route or {}).get("spec") or {}
    for rule in spec.get("http") or []:
        if rule.get("name") == slug(model, empty="model"):
            return 1 + int((rule.get("retries") or {}).get("attempts", 0))
    return 1


def pick(split: tuple[tuple[str, int], ...], rng: random.Random) -> str | None:
    """One destination by weight, as Envoy picks among weighted clusters; None when every
    weight is 0 (no route: the request fails).

    Example:
        >>> pick((("p", 0), ("s", 100)), random.Random(1))
        's'
    """
    total = sum(weight for _, weight in split)
    if total <= 0:
        return None
    point = rng.randrange(total)
    for name, weight in split:
        if point < weight:
            return name
        point -= weight
    raise AssertionError("unreachable: the point lies within the total")


@dataclass
class UserTraffic:
    """A user sending one request every `interval` seconds: `route()` is the route as the
    router has it now, `send(destination)` one try (True when served). `outcomes` holds
    (sent, destination that served, or FAILED).

    Example:
        >>> up = {"m": False, "m-standby": True}
        >>> users = UserTraffic(lambda: route, "m", lambda d: up[d])  # doctest: +SKIP
        >>> users.request()  # doctest: +SKIP
        'failed'
    """

    route: Callable[[], Obj | None]
    model: str
    send: Callable[[str], bool]
    interval: float = 0.02
    seed: int = 0
    clock: Callable[[], float] = time.monotonic
    outcomes: list[tuple[float, str]] = field(default_factory=list)
    error: GkemlError | None = None  # what stopped the users (a try that could not be sent)
    _stop: threading.Event = field(default_factory=threading.Event)
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def request(self) -> str:
        """One request: its destination picked once, every try sent there."""
        sent = self.clock()
        route = self.route()
        destination = pick(route_split(route, self.model), self._rng)
        outcome = FAILED
        if destination is not None:
            for _ in range(route_tries(route, self.model)):
                if self.send(destination):
                    outcome = destination
                    break
        self.outcomes.append((sent, outcome))
        return outcome

    def __enter__(self) -> UserTraffic:
        threading.Thread(target=self._run, daemon=True, name="gkeml-drill-traffic").start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.request()
            except GkemlError as exc:
                self.error = exc
                return
            self._stop.wait(self.interval)

    def failover(self, lost: float, recovered: float) -> tuple[int, int]:
        """(requests, failed) among those sent from `lost` (the primary's loss) until
        `recovered` (the route at a serving standby): what users saw of the failover."""
        window = [o for sent, o in list(self.outcomes) if lost <= sent <= recovered]
        return len(window), sum(o == FAILED for o in window)
