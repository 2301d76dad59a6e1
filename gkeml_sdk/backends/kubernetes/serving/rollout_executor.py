"""`RolloutExecutor`: runs the pure rollout state machine (`serving/rollout_machine.py`)
against the cluster: reads what the servers show, advances with an injectable clock, applies
the actions, and keeps the service's version record (`VersionRecord`, in the same module) in its
ConfigMap after every step, so a rollout survives the process that started it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from gkeml_sdk.backends.kubernetes.api.resources import resource, resource_of
from gkeml_sdk.backends.kubernetes.api.shared_apply import split_shared
from gkeml_sdk.backends.kubernetes.serving.serve_apply import ServingCluster, apply_owned
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.serving.catalog import SERVE_LABEL
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.readiness import ServingState, serving_status
from gkeml_sdk.serving.rollout import CANARY_SUFFIX
from gkeml_sdk.serving.rollout_machine import (
    SUFFIX,
    Action,
    CanarySample,
    Observation,
    Phase,
    RolloutState,
    VersionRecord,
    advance,
    start,
)
from gkeml_sdk.serving.routing import Route

CONFIG_MAPS = resource(kinds.CORE, "ConfigMap")
PODS = resource(kinds.CORE, "Pod")
VERSION_ANNOTATION = "gkeml.dev/version"  # on the server object, never its pod template
SERVER_KINDS = ("Deployment", "LeaderWorkerSet")


class CanaryMetrics(Protocol):
    """Reads what a canary answered since `since` (clock seconds); None when unknown."""

    def sample(self, namespace: str, name: str, since: float) -> CanarySample | None: ...


class RolloutExecutor:
    """Moves service `name` between versions; one `step()` observes, advances and acts.

    Example:
        >>> ex = RolloutExecutor(backend, "chat", "ml", clock=lambda: 0.0)  # doctest: +SKIP
        >>> ex.begin(new_spec).phase  # doctest: +SKIP
        <Phase.STARTING: 'starting'>
    """

    def __init__(
        self,
        backend: ServingCluster,
        name: str,
        namespace: str,
        *,
        clock: Callable[[], float] = time.time,
        metrics: CanaryMetrics | None = None,
    ) -> None:
        self._backend, self.name, self.namespace = backend, name, namespace
        self._clock, self._metrics = clock, metrics

    # The record -------------------------------------------------------------------------
    def record(self) -> VersionRecord:
        """The service's versions and the rollout in progress."""
        found = self._backend.kube.find(CONFIG_MAPS, self.name + SUFFIX, self.namespace)
        return VersionRecord.from_data((found or {}).get("data"))

    def save(self, record: VersionRecord) -> None:
        """Write `record` into the service's ConfigMap."""
        labels = {**sdk_labels(), SERVE_LABEL: self.name}
        meta = {"name": self.name + SUFFIX, "namespace": self.namespace, "labels": labels}
        cm = {"apiVersion": kinds.CORE, "kind": "ConfigMap", "metadata": meta}
        self._backend.kube.apply({**cm, "data": record.to_data()})

    def served(self, svc: ServeModel) -> VersionRecord:
        """Record `svc` as the version now applied (a first serve, or a serve of a new spec)."""
        record = self.record()
        spec = svc.model_dump(mode="json")
        if record.versions and record.latest.spec == spec:
            return record
        record = record.added(spec, outcome="serving", now=self._clock())
        self.save(record)
        return record

    # The rollout ------------------------------------------------------------------------
    def begin(self, new: ServeModel) -> RolloutState:
        """Start moving the service to `new`; refused while another rollout runs."""
        record = self.record()
        state = record.state
        if state is not None and not state.done:
            from gkeml_sdk.errors import SpecError

            raise SpecError(
                f"{self.name}: version {state.version} is still rolling out ({state.phase.value})",
                rule="one rollout at a time, so the record says which version serves",
                fix="handle.update(...) again after it completes or rolls back",
            )
        if not record.versions:
            raise ValueError(f"{self.name}: no version recorded; serve it first")
        current = record.latest
        if current.outcome == "serving" and self._ready(self._spec(current.spec), current.version):
            record = record.with_outcome(current.version, "ready", now=self._clock())
        previous = record.last_ready() or current
        record = record.added(new.model_dump(mode="json"), outcome="rolling-out", now=self._clock())
        plan = new.plan()
        deadline = new.rollout.deadline_seconds(plan.startup_seconds, new.max_replicas)
        version = record.latest.version
        state, actions = start(
            new.rollout,
            version=version,
            previous=previous.version,
            now=self._clock(),
            deadline_seconds=deadline,
        )
        self._act(record, state, actions)
        self.save(record.with_state(state))
        return state

    def step(self) -> RolloutState:
        """Observe the cluster, advance the rollout one transition, act, save the record."""
        record = self.record()
        state = record.state
        if state is None:
            raise ValueError(f"{self.name}: no rollout to step")
        if state.done:
            return state
        new = self._spec(record.get(state.version).spec)
        seen = self._observe(record, state)
        state, actions = advance(state, seen, new.rollout)
        self._act(record, state, actions)
        self.save(record.with_state(state))
        return state

    def remove_canary(self) -> None:
        """Delete the canary of a rollout that is still running (the service is going away)."""
        record = self.record()
        state = record.state
        if state is not None and not state.done and state.strategy == "canary":
            self._delete(self._canary(self._spec(record.get(state.version).spec)))

    def run(
        self, *, poll_seconds: float = 2.0, sleep: Callable[[float], None] = time.sleep
    ) -> RolloutState:
        """Step until the rollout completes or is rolled back."""
        state = self.step()
        while not state.done:
            sleep(poll_seconds)
            state = self.step()
        return state

    # Observing --------------------------------------------------------------------------
    def _observe(self, record: VersionRecord, state: RolloutState) -> Observation:
        target = self._spec(record.get(state.target).spec)
        server_ready, why = self._readiness(target, state.target)
        canary_ready, canary_why = False, ""
        sample = None
        if state.strategy == "canary" and state.phase in (Phase.STARTING, Phase.ANALYSING):
            canary = self._canary(self._spec(record.get(state.version).spec))
            canary_ready, canary_why = self._readiness(canary, state.version)
            if state.phase is Phase.ANALYSING and self._metrics is not None:
                since = state.analysis_until or 0.0
                since -= target.rollout.analysis_seconds
                sample = self._metrics.sample(self.namespace, canary.name, since)
            why = canary_why
        return Observation(
            now=self._clock(),
            server_ready=server_ready,
            canary_ready=canary_ready,
            not_ready_reason=why,
            sample=sample,
        )

    def _ready(self, svc: ServeModel, version: int) -> bool:
        return self._readiness(svc, version)[0]

    def _readiness(self, svc: ServeModel, version: int) -> tuple[bool, str]:
        kube = self._backend.kube
        pods, _ = kube.list(PODS, self.namespace, label_selector=f"{SERVE_LABEL}={svc.name}")
        for obj in _servers(svc):
            live = kube.find(resource_of(obj), obj["metadata"]["name"], self.namespace)
            if live is None:
                return False, f"{obj['kind']} {obj['metadata']['name']} not found"
            annotations = (live.get("metadata") or {}).get("annotations") or {}
            if annotations.get(VERSION_ANNOTATION) != str(version):
                return False, f"{obj['metadata']['name']} does not run version {version} yet"
            status = serving_status(live, pods)
            if not status.ready and status.state is not ServingState.STOPPED:
                return False, f"{status.reason}: {status.message}"
        return True, ""

    # Acting -----------------------------------------------------------------------------
    def _act(self, record: VersionRecord, state: RolloutState, actions: list[Action]) -> None:
        new = self._spec(record.get(state.version).spec)
        old = self._spec(record.get(state.previous).spec)
        for action in actions:
            if action is Action.APPLY_NEW:
                self._apply(self._routed(new, old, state), state.version, before=old)
            elif action is Action.RESTORE:
                self._apply(old, state.previous, before=new)
            elif action is Action.APPLY_CANARY:
                self._apply(self._canary(new), state.version, owner=self.name + CANARY_SUFFIX)
            elif action is Action.ROUTE_CANARY:
                stable = new if state.phase is Phase.PROMOTING else old
                self._apply(_weighted(stable, new.rollout.canary_weight), state.target)
            elif action is Action.ROUTE_STABLE:
                stable = new if state.phase is Phase.COMPLETE else old
                self._apply(stable, state.target)
            elif action is Action.DELETE_CANARY:
                self._delete(self._canary(new))

    def _routed(self, new: ServeModel, old: ServeModel, state: RolloutState) -> ServeModel:
        # While the server surges after a canary, the canary keeps its share of the requests.
        if state.strategy == "canary":
            return _weighted(new, new.rollout.canary_weight)
        return new

    def _apply(
        self, svc: ServeModel, version: int, *, before: ServeModel | None = None, owner: str = ""
    ) -> None:
        objects = [stamped(o, version) for o in svc.compile().objects]
        apply_owned(self._backend, objects, owner or svc.name)
        if before is not None:  # e.g. an HPA the new version replaced by a ScaledObject
            kept = {(o["kind"], o["metadata"]["name"]) for o in objects}
            for obj in split_shared(before.compile().objects)[1]:
                if (obj["kind"], obj["metadata"]["name"]) not in kept:
                    self._backend.kube.delete(
                        resource_of(obj), obj["metadata"]["name"], self.namespace
                    )

    def _delete(self, svc: ServeModel) -> None:
        for obj in split_shared(svc.compile().objects)[1]:
            self._backend.kube.delete(resource_of(obj), obj["metadata"]["name"], self.namespace)

    def _canary(self, new: ServeModel) -> ServeModel:
        assert new.routing is not None  # construction refuses a canary without routing
        return new.with_changes(
            name=self.name + CANARY_SUFFIX,
            replicas=new.rollout.canary_replicas,
            spot=False if new.spot_mix is not None else new.spot,
            routing=new.routing.model_copy(update={"routes": [], "backend_only": True}),
            rollout={"strategy": "surge"},
        )

    def _spec(self, data: dict[str, Any]) -> ServeModel:
        return ServeModel.model_validate(data)


def _servers(svc: ServeModel) -> list[Obj]:
    return [o for o in svc.compile().objects if o["kind"] in SERVER_KINDS]


def stamped(obj: Obj, version: int) -> Obj:
    """`obj` with the version it belongs to on a server object (not its pods: restoring a
    version then restores the very pod template its ReplicaSet still has)."""
    if obj["kind"] not in SERVER_KINDS:
        return obj
    meta = dict(obj["metadata"])
    meta["annotations"] = {**(meta.get("annotations") or {}), VERSION_ANNOTATION: str(version)}
    return {**obj, "metadata": meta}


def _weighted(stable: ServeModel, percent: int) -> ServeModel:
    """`stable` with `percent` of its requests sent to its canary."""
    routing = stable.routing
    assert routing is not None
    canary = stable.name + CANARY_SUFFIX
    routes = list(routing.routes) or [Route(model=stable.model_name, backends={stable.name: 1})]
    split = []
    for route in routes:
        # Weights are relative: scale every backend by 100 so the canary's share is exact.
        backends = {name: weight * 100 for name, weight in route.backends.items()}
        weight = route.backends.get(stable.name, 0)
        if weight:
            backends[stable.name] = weight * (100 - percent)
            backends[canary] = weight * percent
        split.append(Route(model=route.model, backends=backends))
    return stable.with_changes(routing=routing.model_copy(update={"routes": split}))
