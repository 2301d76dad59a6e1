"""A rollout's progress: the state machine that drives it (pure, clock passed in) and the record
of a server's versions and how each rollout ended, kept in a ConfigMap beside the server.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from gkeml_sdk.serving.rollout import Rollout

SCHEMA = 1
RECORD_KEY = "versions.json"
SUFFIX = "-versions"
KEEP_VERSIONS = 20  # the oldest specs leave the record; a ConfigMap holds at most 1 MiB
OUTCOMES = ("serving", "rolling-out", "ready", "rolled-back", "superseded")


class Phase(StrEnum):
    """Where a rollout is."""

    STARTING = "starting"  # surge: the server runs the new version; canary: the canary starts
    ANALYSING = "analysing"  # the canary is ready and takes its share of the requests
    PROMOTING = "promoting"  # the canary passed; the server surges to the new version
    COMPLETE = "complete"
    ROLLING_BACK = "rolling-back"  # the last ready version is being restored
    ROLLED_BACK = "rolled-back"


TERMINAL = frozenset({Phase.COMPLETE, Phase.ROLLED_BACK})


class Action(StrEnum):
    """What the executor does to the cluster."""

    APPLY_NEW = "apply-new"  # the server's objects at the new version
    APPLY_CANARY = "apply-canary"  # the canary's objects (new version, canary replicas)
    ROUTE_CANARY = "route-canary"  # weights: stable 100-w, canary w
    ROUTE_STABLE = "route-stable"  # weights: stable 100
    DELETE_CANARY = "delete-canary"
    RESTORE = "restore"  # the server's objects at the last ready version


@dataclass(frozen=True)
class CanarySample:
    """What the canary answered since its analysis began.

    Example:
        >>> CanarySample(requests=200, errors=3, latency_p95_seconds=4.0).error_ratio
        0.015
    """

    requests: int
    errors: int
    latency_p95_seconds: float | None = None

    @property
    def error_ratio(self) -> float:
        """Failed requests per request (0 with none)."""
        return self.errors / self.requests if self.requests else 0.0


@dataclass(frozen=True)
class Observation:
    """The cluster at `now`: is the server ready at the version this phase targets, is the
    canary ready, why not, and the canary's metrics (None when not read)."""

    now: float
    server_ready: bool
    canary_ready: bool = False
    not_ready_reason: str = ""
    sample: CanarySample | None = None


@dataclass(frozen=True)
class RolloutState:
    """One rollout from version `previous` to `version`.

    Example:
        >>> s, actions = start(Rollout(), version=2, previous=1, now=0.0, deadline_seconds=60)
        >>> s.phase, s.deadline, actions
        (<Phase.STARTING: 'starting'>, 60.0, [<Action.APPLY_NEW: 'apply-new'>])
    """

    strategy: str
    version: int
    previous: int
    phase: Phase
    started: float
    deadline: float
    deadline_seconds: int
    analysis_until: float | None = None
    reason: str = ""
    finished: float | None = None

    @property
    def done(self) -> bool:
        """True once complete or rolled back."""
        return self.phase in TERMINAL

    @property
    def target(self) -> int:
        """The version the server should run in this phase."""
        if self.phase in (Phase.ROLLING_BACK, Phase.ROLLED_BACK):
            return self.previous
        if self.strategy == "canary" and self.phase in (Phase.STARTING, Phase.ANALYSING):
            return self.previous
        return self.version

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the record's `state`)."""
        return {**asdict(self), "phase": self.phase.value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RolloutState:
        """The state `to_json` wrote."""
        return cls(**{**data, "phase": Phase(data["phase"])})


def start(
    rollout: Rollout, *, version: int, previous: int, now: float, deadline_seconds: int
) -> tuple[RolloutState, list[Action]]:
    """The first state and actions of a rollout from `previous` to `version`.

    `advance()` then takes what the cluster shows and returns the next state and the actions
    that get there. The executor (`backends/kubernetes/serving/rollout_executor.py`, run by
    the client or the in-cluster controller) brings the cluster to each phase's whole desired
    state (`rollout_objects.desired`), which those actions describe, so a step cut short is
    done again by the next. The table of transitions is in docs/serving-rollouts.md.
    """
    state = RolloutState(
        strategy=rollout.strategy,
        version=version,
        previous=previous,
        phase=Phase.STARTING,
        started=now,
        deadline=now + deadline_seconds,
        deadline_seconds=deadline_seconds,
    )
    first = Action.APPLY_CANARY if rollout.strategy == "canary" else Action.APPLY_NEW
    return state, [first]


def advance(
    state: RolloutState, seen: Observation, rollout: Rollout
) -> tuple[RolloutState, list[Action]]:
    """The next state and the actions that get there (none: wait and observe again).

    Example:
        >>> s, _ = start(Rollout(), version=2, previous=1, now=0.0, deadline_seconds=60)
        >>> s, actions = advance(s, Observation(now=61.0, server_ready=False,
        ...                      not_ready_reason="ImagePullBackOff"), Rollout())
        >>> s.phase.value, actions
        ('rolling-back', [<Action.RESTORE: 'restore'>])
        >>> s.reason
        'version 2 not ready within 60 s: ImagePullBackOff'
    """
    phase, now = state.phase, seen.now
    if phase in TERMINAL:
        return state, []
    if phase is Phase.ROLLING_BACK:
        if seen.server_ready:
            return replace(state, phase=Phase.ROLLED_BACK, finished=now), []
        return state, []
    late = now >= state.deadline
    why = seen.not_ready_reason or "replicas not ready"
    if phase is Phase.STARTING and state.strategy == "surge":
        if seen.server_ready:
            return replace(state, phase=Phase.COMPLETE, finished=now), []
        if late:
            reason = f"version {state.version} not ready within {state.deadline_seconds} s: {why}"
            return _back(state, reason), [Action.RESTORE]
        return state, []
    if phase is Phase.STARTING:
        if seen.canary_ready:
            until = now + rollout.analysis_seconds
            return replace(state, phase=Phase.ANALYSING, analysis_until=until), [
                Action.ROUTE_CANARY
            ]
        if late:
            reason = f"canary of version {state.version} not ready within "
            reason += f"{state.deadline_seconds} s: {why}"
            return _back(state, reason), [Action.DELETE_CANARY]
        return state, []
    if phase is Phase.ANALYSING:
        failed = _gate(state, seen, rollout)
        if failed:
            return _back(state, failed), [Action.ROUTE_STABLE, Action.DELETE_CANARY]
        assert state.analysis_until is not None
        if now < state.analysis_until:
            return state, []
        deadline = now + state.deadline_seconds
        return replace(state, phase=Phase.PROMOTING, deadline=deadline), [Action.APPLY_NEW]
    # PROMOTING: the canary passed and the server surges to the new version.
    if seen.server_ready:
        done = replace(state, phase=Phase.COMPLETE, finished=now)
        return done, [Action.ROUTE_STABLE, Action.DELETE_CANARY]
    if late:
        reason = f"version {state.version} passed its canary but was not ready within "
        reason += f"{state.deadline_seconds} s: {why}"
        return _back(state, reason), [Action.RESTORE, Action.ROUTE_STABLE, Action.DELETE_CANARY]
    return state, []


@dataclass(frozen=True)
class Version:
    """One version of the server: its spec, and how its rollout ended.

    `outcome` is `serving` (applied, readiness not yet seen), `rolling-out`, `ready` (the server
    ran it with every replica ready), `rolled-back` (with `reason`), or `superseded` (a later
    version became ready).
    """

    version: int
    spec: dict[str, Any]
    outcome: str
    reason: str = ""
    started: float | None = None
    finished: float | None = None

    def __str__(self) -> str:
        why = f": {self.reason}" if self.reason else ""
        return f"v{self.version} {self.outcome}{why}"


@dataclass(frozen=True)
class VersionRecord:
    """Every kept version, newest last, and the rollout in progress (if any), kept in one
    ConfigMap beside the server (`<name>-versions`) so that the handle, the CLI and a controller
    read the same story; the backend reads and writes the ConfigMap.

    Example:
        >>> r = VersionRecord().added({"image": "a"}, outcome="serving", now=0.0)
        >>> r.latest.version, VersionRecord.from_data(r.to_data()).latest.outcome
        (1, 'serving')
    """

    versions: tuple[Version, ...] = ()
    state: RolloutState | None = None
    schema: int = SCHEMA
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def latest(self) -> Version:
        """The newest version."""
        return self.versions[-1]

    def get(self, version: int) -> Version:
        """The entry of `version`."""
        return next(v for v in self.versions if v.version == version)

    def last_ready(self) -> Version | None:
        """The newest version whose rollout ended ready (what a rollback restores)."""
        return next((v for v in reversed(self.versions) if v.outcome == "ready"), None)

    def added(self, spec: dict[str, Any], *, outcome: str, now: float) -> VersionRecord:
        """A copy with a new version of `spec` at the end."""
        number = self.versions[-1].version + 1 if self.versions else 1
        entry = Version(number, spec, outcome, started=now)
        return replace(self, versions=(*self.versions, entry)[-KEEP_VERSIONS:])

    def with_outcome(
        self, version: int, outcome: str, reason: str = "", now: float | None = None
    ) -> VersionRecord:
        """A copy where `version` ended with `outcome`; a newly ready version supersedes the
        older ready ones."""
        out = []
        for v in self.versions:
            if v.version == version:
                v = replace(v, outcome=outcome, reason=reason, finished=now)
            elif outcome == "ready" and v.outcome == "ready" and v.version < version:
                v = replace(v, outcome="superseded")
            out.append(v)
        return replace(self, versions=tuple(out))

    def with_state(self, state: RolloutState | None) -> VersionRecord:
        """A copy with the rollout state replaced, and the version's outcome kept in step."""
        record = replace(self, state=state)
        if state is None:
            return record
        if state.phase is Phase.COMPLETE:
            return record.with_outcome(state.version, "ready", now=state.finished)
        if state.phase in (Phase.ROLLING_BACK, Phase.ROLLED_BACK):
            return record.with_outcome(state.version, "rolled-back", state.reason, state.finished)
        return record.with_outcome(state.version, "rolling-out")

    def to_data(self) -> dict[str, str]:
        """The ConfigMap's `data`."""
        body = {
            "schema": self.schema,
            "versions": [asdict(v) for v in self.versions],
            "state": self.state.to_json() if self.state else None,
        }
        return {RECORD_KEY: json.dumps(body, sort_keys=True, separators=(",", ":"))}

    @classmethod
    def from_data(cls, data: dict[str, str] | None) -> VersionRecord:
        """The record a ConfigMap's `data` holds (empty when there is none)."""
        if not data or RECORD_KEY not in data:
            return cls()
        body = json.loads(data[RECORD_KEY])
        state = body.get("state")
        return cls(
            versions=tuple(Version(**v) for v in body.get("versions", [])),
            state=RolloutState.from_json(state) if state else None,
            schema=int(body.get("schema", SCHEMA)),
        )


def _gate(state: RolloutState, seen: Observation, rollout: Rollout) -> str:
    canary = f"canary of version {state.version}"
    if not seen.canary_ready:
        return f"{canary} stopped being ready: {seen.not_ready_reason or 'replicas not ready'}"
    sample = seen.sample
    if sample is None:
        return ""
    if sample.requests and sample.error_ratio > rollout.max_error_ratio:
        return (
            f"{canary} failed {sample.errors} of {sample.requests} requests "
            f"({sample.error_ratio:.1%} > max_error_ratio {rollout.max_error_ratio:.1%})"
        )
    limit, p95 = rollout.max_latency_seconds, sample.latency_p95_seconds
    if limit is not None and p95 is not None and p95 > limit:
        return f"{canary} p95 latency {p95:.2f} s > max_latency_seconds {limit:g}"
    assert state.analysis_until is not None
    if seen.now >= state.analysis_until and sample.requests < rollout.min_requests:
        return (
            f"{canary} answered {sample.requests} requests in {rollout.analysis_seconds} s, "
            f"fewer than min_requests={rollout.min_requests}: not enough to judge it"
        )
    return ""


def _back(state: RolloutState, reason: str) -> RolloutState:
    return replace(state, phase=Phase.ROLLING_BACK, reason=reason)
