"""Failover drills: take a model's primary readiness away (the Ready condition of its pods,
through `pods/status`) and measure, against the tier's recovery time objective, the time
until the tenant's route points at a ready standby, and what users saw meanwhile: requests
every 20 ms routed as the compiled route routes them (`standby.user_traffic`), each try
served when its destination has a Ready pod whose engine is awake (a warm standby's engine
is asked through `pods/proxy`); then the standbys left, the time until their count is
restored, and the failback once readiness is given back. On a real cluster the kubelet
reasserts readiness at its next status sync, which ends the drill's outage."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from gkeml_sdk.backends.kubernetes.api.kube import KubeClient
from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.api.streams import StreamHub, StreamSpec
from gkeml_sdk.backends.kubernetes.standby.failover import PODS, promoted
from gkeml_sdk.backends.kubernetes.standby.user_traffic import UserTraffic
from gkeml_sdk.backends.kubernetes.standby.view import Key, ready
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.core.rules import slug
from gkeml_sdk.errors import ClusterError, GkemlError, RunTimeoutError
from gkeml_sdk.serving.catalog import SERVE_LABEL
from gkeml_sdk.tenancy import names
from gkeml_sdk.tenancy.model import Tenant, TenantModel


class Drilled(Protocol):
    """What a drill needs of the manager it drills (`StandbyManager`)."""

    kube: KubeClient
    error: GkemlError | None
    refused: dict[str, GkemlError]
    changed: threading.Condition

    def acting_for(self, tenant: str) -> bool: ...


ROUTERS = {
    "istio": resource(kinds.ISTIO_NETWORKING, "VirtualService"),
    "inference-gateway": resource(kinds.GATEWAY, "HTTPRoute"),
}


@dataclass(frozen=True)
class DrillRow:
    """One model's drill: recovery against the objective, standbys left and restored."""

    tenant: str
    tier: str
    model: str
    objective_seconds: float
    recovery_seconds: float
    standbys_left: int
    standbys_restored: int
    restore_seconds: float
    failback_seconds: float
    requests: int = 0  # sent by users from the loss until the recovery
    failed: int = 0  # of those, failed after every retry

    @property
    def met(self) -> bool:
        """True when recovery took no longer than the objective."""
        return self.recovery_seconds <= self.objective_seconds


@dataclass(frozen=True)
class DrillReport:
    """Every row of a drill.

    Example:
        >>> row = DrillRow("t", "A", "m", 5.0, 0.12, 0, 2, 0.5, 0.1, 6, 5)
        >>> print(DrillReport((row,)).table())
        tier  model  objective  measured  met  failed  left  restored  restore
        A     t/m    5 s        0.120 s   yes  5/6     0     2         0.500 s
    """

    rows: tuple[DrillRow, ...]

    def table(self) -> str:
        """A fixed-width text table."""
        rows = [
            (
                r.tier,
                f"{r.tenant}/{r.model}",
                f"{r.objective_seconds:g} s",
                f"{r.recovery_seconds:.3f} s",
                "yes" if r.met else "NO",
                f"{r.failed}/{r.requests}",
                str(r.standbys_left),
                str(r.standbys_restored),
                f"{r.restore_seconds:.3f} s",
            )
            for r in self.rows
        ]
        head = (
            "tier",
            "model",
            "objective",
            "measured",
            "met",
            "failed",
            "left",
            "restored",
            "restore",
        )
        widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=True)]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
            for line in (head, *rows)
        ]
        return "\n".join(lines)


def run_drill(
    manager: Drilled,
    tenant: Tenant,
    model: str | None,
    timeout: float,
    on_loss: Callable[[], None] | None = None,
) -> DrillReport:
    """Drill `model` (or every model) of `tenant` while `manager` runs. `on_loss` runs at
    the moment the last primary goes (a drill that kills the leading manager with it)."""
    models = [tenant.model_named(model)] if model else list(tenant.models)
    end = time.monotonic() + timeout
    while not manager.acting_for(tenant.name):
        if manager.error is not None:
            raise manager.error
        if tenant.name in manager.refused:
            raise manager.refused[tenant.name]
        with manager.changed:
            manager.changed.wait(0.2)
        if time.monotonic() > end:
            raise RunTimeoutError(f"drill: no standby manager leading within {timeout:.0f} s")
    specs = [
        StreamSpec(PODS, tenant.namespace, label_selector=names.MODEL_LABEL),
        StreamSpec(ROUTERS[tenant.routing], tenant.namespace),
    ]
    with StreamHub(manager.kube, specs) as hub:
        watched = _Watched(hub)
        return DrillReport(
            tuple(_drill(manager, tenant, m, watched, timeout, on_loss) for m in models)
        )


class _Watched:
    """The drill's own view of pods and the route, from its own watches."""

    def __init__(self, hub: StreamHub) -> None:
        self.hub = hub
        self.pods: dict[Key, Obj] = {}
        self.route: Obj | None = None

    def until(self, check: Any, timeout: float, what: str) -> float:
        """Wait for `check()`; the monotonic time it first held."""
        end = time.monotonic() + timeout
        while not check():
            left = end - time.monotonic()
            if left <= 0:
                raise RunTimeoutError(f"drill: {what} did not happen within {timeout:.0f} s")
            event = self.hub.next(timeout=min(left, 1.0))
            if event is None:
                continue
            meta = event.obj.get("metadata") or {}
            if event.kind in ("VirtualService", "HTTPRoute"):
                self.route = None if event.type == "DELETED" else event.obj
            elif event.type == "DELETED":
                self.pods.pop((meta.get("namespace", ""), meta.get("name", "")), None)
            else:
                self.pods[(meta.get("namespace", ""), meta.get("name", ""))] = event.obj
        return time.monotonic()

    def ready(self, serve: str) -> list[Obj]:
        return [
            p
            for p in list(self.pods.values())  # also read by the users' thread
            if (p["metadata"].get("labels") or {}).get(SERVE_LABEL) == serve and ready(p)
        ]

    def standby_weight(self, model: TenantModel) -> int | None:
        spec = (self.route or {}).get("spec") or {}
        for rule in spec.get("http") or spec.get("rules") or []:
            if rule.get("name") == slug(model.name, empty="model"):
                standby = (rule.get("route") or rule.get("backendRefs"))[1]
                return int(standby.get("weight", 0))
        return None


def _drill(
    manager: Drilled,
    tenant: Tenant,
    model: TenantModel,
    seen: _Watched,
    timeout: float,
    on_loss: Callable[[], None] | None,
) -> DrillRow:
    standby = names.standby_name(model.name)
    running = 0 if tenant.tier.standby_level == "cold" else tenant.tier.standbys
    seen.until(
        lambda: (
            seen.ready(model.name)
            and len(seen.ready(standby)) >= running
            and seen.standby_weight(model) not in (None, 100)
        ),
        timeout,
        f"a steady state: a ready primary of {model.name}, {running} ready standbys, normal route",
    )
    primaries = [p["metadata"]["name"] for p in seen.ready(model.name)]
    for pod in primaries[:-1]:
        _set_ready(manager, tenant, pod, ready=False)
    users = UserTraffic(lambda: seen.route, model.name, _Try(manager, tenant, model, seen))
    with users:
        lost = time.monotonic()  # the last ready primary goes now
        if on_loss is not None:
            on_loss()
        _set_ready(manager, tenant, primaries[-1], ready=False)
        recovered = seen.until(
            lambda: seen.standby_weight(model) == 100 and bool(seen.ready(standby)),
            timeout,
            f"the route of {model.name} pointing at a ready standby",
        )
    if users.error is not None:
        raise users.error
    requests, failed = users.failover(lost, recovered)
    left = max(len(seen.ready(standby)) - promoted(tenant), 0)
    need = promoted(tenant) + tenant.tier.standbys
    restored = seen.until(
        lambda: len(seen.ready(standby)) >= need, timeout, f"{tenant.tier.standbys} standbys back"
    )
    count = len(seen.ready(standby)) - promoted(tenant)
    for pod in primaries:
        _set_ready(manager, tenant, pod, ready=True)
    back = seen.until(
        lambda: seen.standby_weight(model) not in (None, 100), timeout, "the failback"
    )
    return DrillRow(
        tenant=tenant.name,
        tier=tenant.tier.name,
        model=model.name,
        objective_seconds=tenant.tier.rto_seconds,
        recovery_seconds=recovered - lost,
        standbys_left=left,
        standbys_restored=count,
        restore_seconds=restored - lost,
        failback_seconds=back - restored,
        requests=requests,
        failed=failed,
    )


class _Try:
    """One try of a user's request to a destination: served when it has a Ready pod (an
    endpoint) whose engine is awake; a warm standby's engine is asked (`/is_sleeping`)."""

    def __init__(
        self, manager: Drilled, tenant: Tenant, model: TenantModel, seen: _Watched
    ) -> None:
        self.manager, self.tenant, self.model, self.seen = manager, tenant, model, seen
        sleep = model.model.engine_row.sleep_mode
        warm = tenant.tier.standby_level == "warm"
        self.state_path = sleep.state_path if warm and sleep is not None else None

    def __call__(self, destination: str) -> bool:
        pods = self.seen.ready(destination)
        if not pods:
            return False
        if self.state_path is None or destination != names.standby_name(self.model.name):
            return True
        pod = pods[0]["metadata"]["name"]
        port = self.model.model.engine_row.port
        path = PODS.path(self.tenant.namespace, f"{pod}:{port}", "proxy") + self.state_path
        try:
            answer = self.manager.kube.raw(path, action=f"ask the engine of pod {pod}")
        except ClusterError as exc:
            if exc.status in (401, 403):  # the drill's account may not ask: say so, not count
                raise
            return False  # no answer: no user request would have been served either
        return isinstance(answer, dict) and answer.get("is_sleeping") is False


def _set_ready(manager: Drilled, tenant: Tenant, pod: str, *, ready: bool) -> None:
    current = manager.kube.get(PODS, pod, tenant.namespace)
    value = "True" if ready else "False"
    conditions = [
        {**c, "status": value} if c.get("type") in ("Ready", "ContainersReady") else c
        for c in (current.get("status") or {}).get("conditions") or []
    ]
    manager.kube.patch(
        PODS, pod, tenant.namespace, {"status": {"conditions": conditions}}, sub="status"
    )
