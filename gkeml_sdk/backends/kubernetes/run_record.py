"""The run record: a ConfigMap that keeps a run's spec, retry policy, attempts and history in
the cluster, so any client (or a restarted one) can follow and resume the same run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from gkeml_sdk.core import kinds
from gkeml_sdk.core.environment import RECORD_HISTORY_MAX_BYTES
from gkeml_sdk.core.labels import RUN_ID_LABEL, attempt_name, record_name, sdk_labels
from gkeml_sdk.core.record_schema import SCHEMA_KEY, record_schema
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus, Transition
from gkeml_sdk.runs.retry import RetryPolicy
from gkeml_sdk.training.code import config_map_key, legacy_config_map_key
from gkeml_sdk.training.code_configmap import code_config_map
from gkeml_sdk.training.model import TrainingJob

RECORD_LABEL = "gkeml.dev/run-record"
# The record's layout (data key `schema`, a string as all ConfigMap data). 1 is also what a
# record written before records carried a schema holds; 2 added each transition's `key` and
# each attempt's `counters` (a schema-1 record loads with them empty); 3 carries the code files
# itself (keys `file.<path>`, which the pods mount), where 1 and 2 named a `<run>-code`
# ConfigMap in `code.configmap`.
RUN_RECORD_SCHEMA = 3
__all__ = [
    "RECORD_LABEL",
    "RUN_RECORD_SCHEMA",
    "AttemptRecord",
    "RunRecord",
    "attempt_name",
    "cancel_marker",
    "cancels",
    "record_name",
]


def cancel_marker(run: str, namespace: str, submitted_at: float = 0.0) -> dict[str, Any]:
    """The object whose existence says the submission of run `run` made at `submitted_at`
    was cancelled. It is separate from the record, so that a client still writing the record
    can never undo a cancellation, and names its submission, so that a leftover marker never
    cancels a later submission of the same name.

    Example:
        >>> marker = cancel_marker("ft", "ml", 1767225600.5)
        >>> marker["metadata"]["name"], marker["data"]
        ('ft-gkeml-cancelled', {'submitted_at': '1767225600.5'})
    """
    return {
        "apiVersion": kinds.CORE,
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{run}-gkeml-cancelled",
            "namespace": namespace,
            "labels": {RUN_ID_LABEL: run, **sdk_labels()},
        },
        "data": {"submitted_at": repr(submitted_at)},
    }


def cancels(marker: dict[str, Any], record: RunRecord) -> bool:
    """Whether a cancel marker applies to `record`: it names the record's submission. A
    marker written before markers named one applies to a run submitted before it was made.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="ft", image="i", command=["x"], namespace="ml")
        >>> cancels(cancel_marker("ft", "ml", 5.0), RunRecord(job=job, submitted_at=6.0))
        False
    """
    written = (marker.get("data") or {}).get("submitted_at")
    if written is not None:
        return bool(written == repr(record.submitted_at))
    created = str((marker.get("metadata") or {}).get("creationTimestamp") or "")
    try:
        made = datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return True  # no way to tell: a cancel is never lost
    return record.submitted_at <= made


@dataclass(frozen=True)
class AttemptRecord:
    """One attempt: its number, object name, whether it ran on Spot, how it ended, and the uid
    of the Job/JobSet created for it (so no client ever follows an older object that had the
    same name)."""

    attempt: int
    name: str
    spot: bool
    outcome: str = ""  # "" while running; the terminal state otherwise
    uid: str = ""  # "" until the object is created
    # Kueue's and JobSet's counts when the attempt ended (preemptions, disruptions, ...).
    counters: dict[str, int] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class RunRecord:
    """Everything needed to follow or resume a run from any client.

    Example:
        >>> job = TrainingJob(name="a", image="i", command=["x"])
        >>> r = RunRecord(job=job, submitted_at=0.0)
        >>> RunRecord.from_configmap(r.to_configmap()) == r
        True
    """

    job: TrainingJob
    submitted_at: float
    retry: RetryPolicy | None = None
    attempts: tuple[AttemptRecord, ...] = ()
    history: tuple[Transition, ...] = ()
    cancelled: bool = False

    @property
    def name(self) -> str:
        """The run's name (= the first attempt's object name)."""
        return self.job.name

    @property
    def current(self) -> AttemptRecord:
        """The newest attempt."""
        return self.attempts[-1]

    def with_attempt(self, attempt: AttemptRecord) -> RunRecord:
        """A copy with `attempt` added or replaced."""
        others = [a for a in self.attempts if a.attempt != attempt.attempt]
        return replace(self, attempts=tuple(sorted([*others, attempt], key=lambda a: a.attempt)))

    def to_configmap(self) -> dict[str, Any]:
        """The record as a ConfigMap in the run's namespace."""
        # The code files are this ConfigMap's `file.*` keys, the ones the pods mount: record
        # and code are one write. The spec keeps only their paths (no second copy of them).
        code = code_config_map(self.job)
        data = {
            SCHEMA_KEY: str(RUN_RECORD_SCHEMA),
            "spec.yaml": _spec_yaml(self.job),
            "files.json": json.dumps(sorted(self.job.files)),
            "code.configmap": record_name(self.name) if self.job.files else "",
            "retry.yaml": self.retry.to_yaml() if self.retry else "",
            "attempts.json": json.dumps([a.__dict__ for a in self.attempts]),
            "history.json": _history_json(self.history),
            "submitted_at": repr(self.submitted_at),
            "cancelled": "true" if self.cancelled else "false",
            **(code["data"] if code else {}),
        }
        return {
            "apiVersion": kinds.CORE,
            "kind": "ConfigMap",
            "metadata": {
                "name": record_name(self.name),
                "namespace": self.job.namespace,
                "labels": {RECORD_LABEL: "true", RUN_ID_LABEL: self.name, **sdk_labels()},
            },
            "data": data,
        }

    @staticmethod
    def code_config_map(obj: dict[str, Any]) -> str:
        """Name of the other ConfigMap holding the recorded job's code files ('' when it has
        none, or carries them itself as schema-3 records do); `from_configmap` then needs its
        data. Refuses a record this SDK cannot read."""
        name = str(_checked_data(obj).get("code.configmap", ""))
        return "" if name == (obj.get("metadata") or {}).get("name") else name

    @classmethod
    def from_configmap(cls, obj: dict[str, Any], code: dict[str, str] | None = None) -> RunRecord:
        """Read a record written by `to_configmap`; `code` is the data of the job's code
        ConfigMap when `code_paths(obj)` is not empty. A record without `schema` (written
        before records carried one) reads as before; a newer one is a `ConfigError`."""
        data = _checked_data(obj)
        retry_yaml = data.get("retry.yaml", "")
        job = TrainingJob.from_yaml(data["spec.yaml"])
        paths = json.loads(data.get("files.json", "[]"))
        key = legacy_config_map_key
        if data.get("code.configmap") == (obj.get("metadata") or {}).get("name"):
            code, key = data, config_map_key  # schema 3: the record carries its code
        if paths:
            missing = [p for p in paths if key(p) not in (code or {})]
            if missing:
                raise ConfigError(
                    f"run {job.name!r}: its code ConfigMap {data['code.configmap']} lacks "
                    f"{missing}; "
                    "it was deleted or edited, so the run cannot be resumed"
                )
            job = job.with_changes(files={p: (code or {})[key(p)] for p in paths})
        return cls(
            job=job,
            submitted_at=float(data.get("submitted_at", "0")),
            retry=RetryPolicy.from_yaml(retry_yaml) if retry_yaml.strip() else None,
            attempts=tuple(AttemptRecord(**a) for a in json.loads(data.get("attempts.json", "[]"))),
            history=tuple(_transition(t) for t in json.loads(data.get("history.json", "[]"))),
            cancelled=data.get("cancelled") == "true",
        )


def _history_json(history: tuple[Transition, ...]) -> str:
    """The history as JSON within `RECORD_HISTORY_MAX_BYTES` (what the record's size rule
    leaves it, `training.record_size`): the oldest transitions go first, the newest stay."""
    kept: list[str] = []
    size = 2
    for transition in reversed(history):
        entry = json.dumps(_transition_dict(transition))
        size += len(entry.encode()) + 2
        if size > RECORD_HISTORY_MAX_BYTES:
            break
        kept.append(entry)
    return "[" + ", ".join(reversed(kept)) + "]"


def _spec_yaml(job: TrainingJob) -> str:
    """`job.to_yaml()` without its code files, and without validating a copy on every save."""
    import yaml

    spec = job.model_dump(mode="json", exclude_defaults=True)
    spec.pop("files", None)
    return yaml.safe_dump(spec, sort_keys=False)


def _checked_data(obj: dict[str, Any]) -> dict[str, Any]:
    """The record's data, once its schema is one this SDK reads."""
    data: dict[str, Any] = obj.get("data") or {}
    meta = obj.get("metadata") or {}
    where = f"run record ConfigMap {meta.get('namespace', '')}/{meta.get('name', '')}"
    record_schema(where, data, RUN_RECORD_SCHEMA)
    return data


def _transition_dict(t: Transition) -> dict[str, Any]:
    s = t.status
    return {
        "state": s.state.value,
        "reason": s.reason,
        "message": s.message,
        "cause": s.cause.value if s.cause else None,
        "attempt": t.attempt,
        "at": t.at,
        "detail": t.detail,
        "key": t.key,
    }


def _transition(d: dict[str, Any]) -> Transition:
    cause = FailureCause(d["cause"]) if d.get("cause") else None
    status = RunStatus(RunState(d["state"]), d.get("reason", ""), d.get("message", ""), cause)
    return Transition(
        status,
        int(d.get("attempt", 1)),
        float(d.get("at", 0.0)),
        d.get("detail", ""),
        str(d.get("key", "")),
    )
