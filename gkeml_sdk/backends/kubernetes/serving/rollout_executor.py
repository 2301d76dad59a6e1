"""`RolloutExecutor`: runs the pure rollout state machine (`serving/rollout_machine.py`)
against the cluster: reads what the servers show, advances with an injectable clock, saves the
service's version record (`VersionRecord`) in its ConfigMap, and brings the cluster to what the
new phase wants (`rollout_objects.py`), so a rollout survives the process that started it.

Every write is conditional on what the step read: the record is saved over the resourceVersion
read (so two executors never both move one rollout), and the objects are read before that save
and written only as read. A step whose phase is already in place writes nothing but the record,
and only when the machine moved; one that finds its phase not in place (a predecessor saved the
record and stopped before acting) does it again: the repair is level-triggered. A finished
rollout is not stepped again, so its last phase is put in place before the record says it is
finished."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

from gkeml_sdk.backends.kubernetes.api.resources import resource, resource_of
from gkeml_sdk.backends.kubernetes.api.shared_apply import ensure_shared, split_shared
from gkeml_sdk.backends.kubernetes.serving.rollout_objects import (
    SERVER_KINDS,
    VERSION_ANNOTATION,
    Converge,
    Desired,
    canary_of,
    desired,
    in_place,
    rollout_specs,
    servers,
    spec_of,
    vouched,
)
from gkeml_sdk.backends.kubernetes.serving.serve_apply import ServingCluster
from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.errors import ClusterError, ConfigError, SpecError
from gkeml_sdk.serving.catalog import SERVE_LABEL
from gkeml_sdk.serving.model import ServeModel
from gkeml_sdk.serving.readiness import ServingState, serving_status
from gkeml_sdk.serving.rollout_machine import (
    SUFFIX,
    CanarySample,
    Observation,
    Phase,
    RolloutState,
    VersionRecord,
    advance,
    start,
)

CONFIG_MAPS = resource(kinds.CORE, "ConfigMap")
PODS = resource(kinds.CORE, "Pod")
log = logging.getLogger(__name__)


class CanaryMetrics(Protocol):
    """Reads what a canary answered since `since` (clock seconds); None when unknown."""

    def sample(self, namespace: str, name: str, since: float) -> CanarySample | None: ...


class RolloutExecutor:
    """Moves service `name` between versions; one `step()` observes, advances and acts.

    With `vouched_only` (the in-cluster controller) it acts only for a rollout whose two
    specs a server object's stamp names: the mark the submitter's own first step left.

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
        vouched_only: bool = False,
    ) -> None:
        self._backend, self.name, self.namespace = backend, name, namespace
        self._clock, self._metrics = clock, metrics
        self.vouched_only = vouched_only

    # The record -------------------------------------------------------------------------
    def read(self) -> tuple[VersionRecord, Obj | None]:
        """The service's versions and rollout in progress, with the ConfigMap they were read
        from (None when there is none yet)."""
        found = self._backend.kube.find(CONFIG_MAPS, self.name + SUFFIX, self.namespace)
        return VersionRecord.from_data((found or {}).get("data")), found

    def record(self) -> VersionRecord:
        """The service's versions and the rollout in progress."""
        return self.read()[0]

    def _save(self, record: VersionRecord, current: Obj | None) -> bool:
        """Write `record` over the ConfigMap as read (`current`); False when someone else
        wrote it since."""
        labels = {**sdk_labels(), SERVE_LABEL: self.name}
        meta = {"name": self.name + SUFFIX, "namespace": self.namespace, "labels": labels}
        body = {"apiVersion": kinds.CORE, "kind": "ConfigMap", "metadata": meta}
        saved = self._backend.kube.write_over({**body, "data": record.to_data()}, current)
        return saved is not None

    def served(self, svc: ServeModel) -> VersionRecord:
        """Record `svc` as the version now applied (a first serve, or a serve of a new spec)."""
        spec = svc.model_dump(mode="json")
        for _ in range(3):  # a writer between the read and the save: read again
            record, current = self.read()
            if record.versions and record.latest.spec == spec:
                return record
            record = record.added(spec, outcome="serving", now=self._clock())
            if self._save(record, current):
                return record
        raise _moved(self.name + SUFFIX, "while this version was recorded")

    # The rollout ------------------------------------------------------------------------
    def begin(self, new: ServeModel) -> RolloutState:
        """Start moving the service to `new`; refused while another rollout runs. The first
        step is the caller's own: its rights apply the new version (or its canary) and
        stamp it with the rollout's specs, which is what lets a controller go on with it."""
        record, current = self.read()
        state = record.state
        if state is not None and not state.done:
            raise SpecError(
                f"{self.name}: version {state.version} is still rolling out ({state.phase.value})",
                rule="one rollout at a time, so the record says which version serves",
                fix="handle.update(...) again after it completes or rolls back",
            )
        if not record.versions:
            raise ValueError(f"{self.name}: no version recorded; serve it first")
        latest = record.latest
        if latest.outcome == "serving" and self._ready(
            spec_of(record, latest.version), latest.version
        ):
            record = record.with_outcome(latest.version, "ready", now=self._clock())
        previous = record.last_ready() or latest
        record = record.added(new.model_dump(mode="json"), outcome="rolling-out", now=self._clock())
        plan = new.plan()
        state, _ = start(
            new.rollout,
            version=record.latest.version,
            previous=previous.version,
            now=self._clock(),
            deadline_seconds=new.rollout.deadline_seconds(plan.startup_seconds, new.max_replicas),
        )
        record = record.with_state(state)
        ensure_shared(self._backend.kube, split_shared(new.compile().objects)[0])
        converge = Converge(self._backend.kube, self.namespace, self.name)
        converge.read(desired(record, state))
        if not self._save(record, current):
            raise _moved(self.name + SUFFIX, "while this update began")
        converge.write()
        return state

    def step(self) -> RolloutState:
        """Observe the cluster, advance the rollout one transition, save the record when the
        machine moved, and bring the cluster to the phase (when it is not in place)."""
        record, current = self.read()
        state = record.state
        if state is None:
            raise ValueError(f"{self.name}: no rollout to step")
        if state.done:
            return state
        new = spec_of(record, state.version)
        specs = [new, spec_of(record, state.previous)]
        live = self._read_servers([*specs, canary_of(new)] if state.strategy == "canary" else specs)
        if self.vouched_only and not vouched(rollout_specs(record, state), list(live.values())):
            raise ConfigError(
                f"rollout of {self.namespace}/{self.name} to version {state.version} refused: no "
                f"server object carries the digests of versions {state.version} and "
                f"{state.previous} as the record keeps them. The controller moves a service "
                "only between the specs its submitter applied with their own rights; a record "
                "written or edited by hand is not acted on. Begin the rollout again with "
                "handle.update(...)"
            )
        seen = self._observe(record, state, live)
        moved, _ = advance(state, seen, new.rollout)
        plan = desired(record, moved)
        converge = None
        if not self._in_place(plan, live):
            converge = Converge(self._backend.kube, self.namespace, self.name)
            converge.read(plan)
        if moved.done and converge is not None:
            # A finished rollout is never stepped again, so nothing would repair what a step
            # cut short left behind: the last phase is put in place before the record says so.
            converge.write()
            converge = None
        if moved != state and not self._save(record.with_state(moved), current):
            log.info("rollout %s/%s was moved by someone else", self.namespace, self.name)
            return self.record().state or moved
        if converge is not None:
            converge.write()
        return moved

    def remove_canary(self) -> None:
        """Delete the canary of a rollout that is still running (the service is going away)."""
        record = self.record()
        state = record.state
        if state is not None and not state.done and state.strategy == "canary":
            for obj in split_shared(canary_of(spec_of(record, state.version)).compile().objects)[1]:
                self._backend.kube.delete(resource_of(obj), obj["metadata"]["name"], self.namespace)

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
    def _read_servers(self, specs: list[ServeModel]) -> dict[str, Obj | None]:
        """The server objects of `specs` as they are now (None: absent), by `_key`."""
        live: dict[str, Obj | None] = {}
        for svc in specs:
            for obj in servers(svc):
                if _key(obj) not in live:
                    live[_key(obj)] = self._backend.kube.find(
                        resource_of(obj), obj["metadata"]["name"], self.namespace
                    )
        return live

    def _observe(
        self, record: VersionRecord, state: RolloutState, live: dict[str, Obj | None]
    ) -> Observation:
        target = spec_of(record, state.target)
        server_ready, why = self._readiness(target, state.target, live)
        canary_ready, canary_why = False, ""
        sample = None
        if state.strategy == "canary" and state.phase in (Phase.STARTING, Phase.ANALYSING):
            canary = canary_of(spec_of(record, state.version))
            canary_ready, canary_why = self._readiness(canary, state.version, live)
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
        return self._readiness(svc, version, self._read_servers([svc]))[0]

    def _readiness(
        self, svc: ServeModel, version: int, live: dict[str, Obj | None]
    ) -> tuple[bool, str]:
        kube = self._backend.kube
        pods, _ = kube.list(PODS, self.namespace, label_selector=f"{SERVE_LABEL}={svc.name}")
        for obj in servers(svc):
            server = live.get(_key(obj))
            if server is None:
                return False, f"{obj['kind']} {obj['metadata']['name']} not found"
            notes = (server.get("metadata") or {}).get("annotations") or {}
            if notes.get(VERSION_ANNOTATION) != str(version):
                return False, f"{obj['metadata']['name']} does not run version {version} yet"
            status = serving_status(server, pods)
            if not status.ready and status.state is not ServingState.STOPPED:
                return False, f"{status.reason}: {status.message}"
        return True, ""

    def _in_place(self, plan: Desired, live: dict[str, Obj | None]) -> bool:
        """Whether the servers read are stamped as `plan` wants, and the canary is there or
        gone as it wants (any object of it not read yet counts as not in place)."""
        wanted = [(o, plan.version, plan.weight) for o in plan.server]
        wanted += [(o, plan.canary_version, 0) for o in plan.canary]
        for obj, version, weight in wanted:
            if obj["kind"] in SERVER_KINDS and not in_place(live.get(_key(obj)), version, weight):
                return False
        for obj in plan.canary_gone:
            found = live.get(_key(obj)) if obj["kind"] in SERVER_KINDS else None
            if found is not None and not (found.get("metadata") or {}).get("deletionTimestamp"):
                return False
        return True


def _key(obj: Obj) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def _moved(config_map: str, when: str) -> ClusterError:
    return ClusterError(
        f"save ConfigMap {config_map}",
        status=409,
        reason="Conflict",
        message=f"someone else wrote the service's version record {when}",
        hint="nothing was applied; try again (it reads the record anew)",
    )
