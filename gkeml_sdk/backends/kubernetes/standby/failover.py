"""One reconcile of one tenant: record primaries seen ready and lost, keep each model's
standbys (create what is missing, scale, put warm ones to sleep), fail a lost primary over
(wake a warm standby, scale up a cold one, route to the standby once it is ready) and fail
back when the primary is ready again. Level-triggered: run after a restart, it finishes
what a stopped manager began. Every write goes through `FencedWrites`; a resync pass also
reads the route and the status back, and asks every warm standby's engine again whether it
sleeps (vLLM `GET /is_sleeping`): an engine put to sleep behind our back (a late `/sleep` of
a manager that lost its Lease) while its standby carries traffic is woken within one
resync."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import parse_qsl

from gkeml_sdk.backends.kubernetes.api.resources import resource
from gkeml_sdk.backends.kubernetes.standby.fenced import FencedWrites
from gkeml_sdk.backends.kubernetes.standby.tenant_status import StatusBook, TenantStatus, now_text
from gkeml_sdk.backends.kubernetes.standby.view import Key, ModelView, allocations
from gkeml_sdk.core import kinds
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import NotFoundError
from gkeml_sdk.tenancy import names
from gkeml_sdk.tenancy.model import Tenant, TenantModel
from gkeml_sdk.tenancy.model_servers import model_objects
from gkeml_sdk.tenancy.routes import router

log = logging.getLogger(__name__)
PODS = resource(kinds.CORE, "Pod")
DEPLOYMENTS = resource(kinds.APPS, "Deployment")
ALLOCATION_SECONDS = 10.0


def standby_replicas(tenant: Tenant, failed_over: bool) -> int:
    """The standby Deployment's replicas: the tier's standbys (none running when cold); in a
    failover also the promoted ones now serving, so that the standby count is restored.

    Example:
        >>> from gkeml_sdk import load_specs
        >>> a, b, c = load_specs("examples/tenants.yaml")
        >>> [standby_replicas(t, False) for t in (a, b, c)], standby_replicas(a, True)
        ([2, 1, 0], 4)
    """
    tier = tenant.tier
    normal = 0 if tier.standby_level == "cold" else tier.standbys
    return normal + promoted(tenant) if failed_over else normal


def promoted(tenant: Tenant) -> int:
    """Standby pods that take a failed primary's traffic (at least one)."""
    return max(tenant.tier.standbys, 1)


class Reconciler:
    """Acts on tenants from the watch caches; remembers only the routes it wrote. Each
    tenant's state is its own key, so one worker thread per tenant may call `tenant()`."""

    def __init__(self, writes: FencedWrites, clock: Callable[[], float] = time.monotonic) -> None:
        self.writes, self.kube, self._clock = writes, writes.kube, clock
        self.book = StatusBook(self.kube, writes.check)
        self._routed: dict[str, frozenset[str]] = {}  # tenant -> models routed to standby
        # tenant -> (pod, uid) -> its engine sleeps, as last asked or set; a resync asks
        # again. One dict per tenant: each is only touched by its tenant's worker.
        self._asleep: dict[str, dict[tuple[str, str], bool]] = {}
        self._reported: set[str] = set()  # tenants whose failovers we reported since leading
        self._allocated_at: dict[str, float] = {}
        self.pending_allocations: set[str] = set()  # tenants whose allocations wait to be written

    def forget(self) -> None:
        """Newly leading: re-read status and engines, re-write routes (another manager may
        have acted)."""
        self._routed.clear()
        self._asleep.clear()
        self._reported.clear()
        self.book = StatusBook(self.kube, self.writes.check)

    def tenant(
        self,
        tenant: Tenant,
        pods: dict[Key, Obj],
        deployments: dict[Key, Obj],
        *,
        resync: bool = False,
    ) -> None:
        """Reconcile `tenant` once: record first (so a successor neither loses nor repeats a
        failover), then route (the recovery itself), then standbys and Events. `resync`
        reads the status and the route again and restores a route changed behind our back."""
        if resync:
            self.book.reread(tenant)
            self._routed.pop(tenant.name, None)
            self._asleep.pop(tenant.name, None)
        views = {m.name: ModelView.of(tenant, m, pods, deployments) for m in tenant.models}
        status, events = self._record(tenant, views, pods)
        if tenant.name not in self._reported:  # a replaced leader may have recorded, not said
            said = {name for name, reason, _ in events if reason == "PrimaryLost"}
            for name in sorted(status.failing_over - said):
                events.append((name, "PrimaryLost", f"{name}: no ready primary; failing over"))
            self._reported.add(tenant.name)
        # Woken before the route moves: traffic never reaches a sleeping engine.
        awake = {
            m.name: self._awake(tenant, m, views[m.name], pods, m.name in status.failing_over)
            for m in tenant.models
        }
        routed = frozenset(name for name in status.failing_over & views.keys() if awake[name])
        before = self._routed.get(tenant.name)
        if before != routed:
            self.writes.put(router(tenant, routed))
            self._routed[tenant.name] = routed
            for name in sorted(routed - (before or frozenset())):
                events.append((name, "FailedOver", f"{name}: traffic routed to its standby"))
        for model in tenant.models:
            failed_over = model.name in status.failing_over
            self._keep_standbys(tenant, model, views[model.name], failed_over, deployments)
            if not failed_over:  # after the route moved back: sleep what carries no traffic
                for pod in awake[model.name] if self._sleeps(tenant, model) else ():
                    self._engine(tenant, model, pods, pod, asleep=True)
        for name, reason, message in events:
            self.book.event(tenant, name, reason, message)
        self._refresh_allocations(tenant, pods)

    def _refresh_allocations(self, tenant: Tenant, pods: dict[Key, Obj]) -> None:
        # At most one write per ALLOCATION_SECONDS: pods churn during rollouts and failovers.
        rows = allocations(tenant, pods)
        now = self._clock()
        if rows == self.book.get(tenant).allocations:
            self.pending_allocations.discard(tenant.name)
            return
        if now - self._allocated_at.get(tenant.name, float("-inf")) < ALLOCATION_SECONDS:
            self.pending_allocations.add(tenant.name)
            return
        self.book.update(tenant, lambda current: replace(current, allocations=rows))
        self._allocated_at[tenant.name] = now
        self.pending_allocations.discard(tenant.name)

    def _record(
        self, tenant: Tenant, views: dict[str, ModelView], pods: dict[Key, Obj]
    ) -> tuple[TenantStatus, list[tuple[str, str, str]]]:
        status = self.book.get(tenant)
        # Models dropped from the spec since the status was written are not watched any more.
        seen = (status.ready_seen & views.keys()) | {n for n, v in views.items() if v.primary_ready}
        lost = {n for n in seen if views[n].primary_ready == 0} - status.failing_over
        back = {n for n in status.failing_over if n not in views or views[n].primary_ready}
        if seen == status.ready_seen and not lost and not back:
            return status, []
        when = now_text()

        def change(current: TenantStatus) -> TenantStatus:
            for name in sorted(lost - current.failing_over):
                current = current.with_failover(name, when)
            return replace(
                current,
                ready_seen=current.ready_seen | seen,
                failing_over=current.failing_over - back,
                allocations=allocations(tenant, pods),
            )

        status = self.book.update(tenant, change)
        self._allocated_at[tenant.name] = self._clock()
        events = [(n, "PrimaryLost", f"{n}: no ready primary; failing over") for n in sorted(lost)]
        events += [(n, "FailedBack", f"{n}: primary ready; routed back") for n in sorted(back)]
        return status, events

    def _keep_standbys(
        self,
        tenant: Tenant,
        model: TenantModel,
        view: ModelView,
        failed_over: bool,
        deployments: dict[Key, Obj],
    ) -> None:
        want = standby_replicas(tenant, failed_over)
        standby, reserve = names.standby_name(model.name), names.reserve_name(model.name)
        missing = set()
        if view.standby_replicas is None:
            missing.add(standby)
        if tenant.tier.standby_level == "cold" and not view.reserve_present:
            missing.add(reserve)
        for obj in model_objects(tenant, model) if missing else []:
            if obj["kind"] == "Deployment" and obj["metadata"]["name"] in missing:
                if obj["metadata"]["name"] == standby:
                    obj["spec"]["replicas"] = want
                log.info("creating missing %s/%s", tenant.namespace, obj["metadata"]["name"])
                self.writes.create(obj)
        if view.standby_replicas is not None and view.standby_replicas != want:
            patch = {"spec": {"replicas": want}}
            seen = deployments.get((tenant.namespace, standby))
            self.writes.patch(DEPLOYMENTS, standby, tenant.namespace, patch, seen)

    @staticmethod
    def _sleeps(tenant: Tenant, model: TenantModel) -> bool:
        """True when the model's standbys are kept asleep (warm tier, an engine that can)."""
        engine = model.model.engine_row
        return tenant.tier.standby_level == "warm" and engine.sleep_mode is not None

    def _awake(
        self,
        tenant: Tenant,
        model: TenantModel,
        view: ModelView,
        pods: dict[Key, Obj],
        failing_over: bool,
    ) -> tuple[str, ...]:
        """The model's ready standbys whose engines are awake; while it fails over, the
        sleeping ones are woken first."""
        if not self._sleeps(tenant, model):
            return view.standby_ready
        awake = []
        for pod in view.standby_ready:
            asleep = self._engine_sleeps(tenant, model, pods, pod)
            if asleep and failing_over:
                asleep = not self._engine(tenant, model, pods, pod, asleep=False)
            if asleep is False:
                awake.append(pod)
        return tuple(awake)

    def _engine_sleeps(
        self, tenant: Tenant, model: TenantModel, pods: dict[Key, Obj], pod: str
    ) -> bool | None:
        """Whether the pod's engine sleeps (asked once per resync); None when it is gone."""
        key, known = _pod_key(tenant, pods, pod), self._asleep.setdefault(tenant.name, {})
        if key not in known:
            sleep = model.model.engine_row.sleep_mode
            assert sleep is not None  # only warm standbys of engines that sleep are asked
            try:
                answer = self.writes.read(
                    _proxy(tenant, model, pod, sleep.state_path),
                    action=f"ask the engine of pod {pod} whether it sleeps",
                )
            except NotFoundError:
                return None
            known[key] = _is_sleeping(answer)
        return known[key]

    def _engine(
        self, tenant: Tenant, model: TenantModel, pods: dict[Key, Obj], pod: str, *, asleep: bool
    ) -> bool:
        """Put the pod's engine to sleep or wake it; False when the pod is gone."""
        sleep = model.model.engine_row.sleep_mode
        assert sleep is not None
        route, _, query = (sleep.sleep_path if asleep else sleep.wake_path).partition("?")
        try:
            self.writes.post(
                _proxy(tenant, model, pod, route),
                tenant.namespace,
                point="sleep" if asleep else "wake",
                action=f"{'sleep' if asleep else 'wake'} engine of pod {pod}",
                query=parse_qsl(query),
            )
        except NotFoundError:
            log.info("pod %s/%s is gone (scaled down)", tenant.namespace, pod)
            return False
        self._asleep.setdefault(tenant.name, {})[_pod_key(tenant, pods, pod)] = asleep
        return True


def _pod_key(tenant: Tenant, pods: dict[Key, Obj], pod: str) -> tuple[str, str]:
    """A pod by name and uid: a pod created again under its name starts with a new engine."""
    meta = (pods.get((tenant.namespace, pod)) or {}).get("metadata") or {}
    return pod, str(meta.get("uid", ""))


def _proxy(tenant: Tenant, model: TenantModel, pod: str, route: str) -> str:
    """The path of `route` on the pod's engine, through the API server's `pods/proxy`."""
    port = model.model.engine_row.port
    return PODS.path(tenant.namespace, f"{pod}:{port}", "proxy") + route


def _is_sleeping(answer: object) -> bool:
    """vLLM's `GET /is_sleeping` answer, `{"is_sleeping": true}`; anything else (an engine
    that does not say) counts as asleep, so a standby that must carry traffic is woken."""
    return not (isinstance(answer, dict) and answer.get("is_sleeping") is False)
