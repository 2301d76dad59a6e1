"""The versions of a model server and how each rollout ended, kept in one ConfigMap beside the
server (`<name>-versions`) so that the handle, the CLI and a controller read the same story.
Pure data: the backend reads and writes the ConfigMap."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from gkeml_sdk.serving.rollout_machine import Phase, RolloutState

SCHEMA = 1
RECORD_KEY = "versions.json"
SUFFIX = "-versions"
KEEP_VERSIONS = 20  # the oldest specs leave the record; a ConfigMap holds at most 1 MiB
OUTCOMES = ("serving", "rolling-out", "ready", "rolled-back", "superseded")


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
    """Every kept version, newest last, and the rollout in progress (if any).

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
