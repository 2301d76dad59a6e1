"""The run record: a ConfigMap that keeps a run's spec, retry policy, attempts and history in
the cluster, so any client (or a restarted one) can follow and resume the same run."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from gkeml_sdk.core import kinds
from gkeml_sdk.core.environment import RECORD_HISTORY_MAX_BYTES
from gkeml_sdk.core.labels import RUN_ID_LABEL, attempt_name, record_name, sdk_labels
from gkeml_sdk.core.record_schema import SCHEMA_KEY, record_schema
from gkeml_sdk.errors import SpecError, excerpt
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
# What the API server lets one ConfigMap's values add up to (kube-apiserver's MaxSecretSize,
# which ValidateConfigMap applies): a record larger than that was not written through it.
MAX_RECORD_CHARS = 1024 * 1024
# Where the submitting client puts the record's `spec_digest` on the attempt object it creates
# with its own rights; every attempt the controller creates copies it (see `spec_digest`).
SPEC_DIGEST_ANNOTATION = "gkeml.dev/spec-digest"
__all__ = [
    "MAX_RECORD_CHARS",
    "RECORD_LABEL",
    "RUN_RECORD_SCHEMA",
    "SPEC_DIGEST_ANNOTATION",
    "AttemptRecord",
    "RunRecord",
    "attempt_name",
    "cancel_marker",
    "cancels",
    "record_name",
    "spec_digest",
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
        >>> r = RunRecord(job=job, submitted_at=0.0, attempts=(AttemptRecord(1, "a", False),))
        >>> RunRecord.from_configmap(r.to_configmap()) == r
        True
    """

    job: TrainingJob
    submitted_at: float
    retry: RetryPolicy | None = None
    attempts: tuple[AttemptRecord, ...] = ()
    history: tuple[Transition, ...] = ()
    cancelled: bool = False
    # `spec_digest(self)` as the submitting client computed it; "" in records of older gkeml.
    spec_digest: str = ""
    # The record ConfigMap as read: every save is conditional on this resourceVersion ("" for
    # a record never written), so two writers never both land. Not part of what it records.
    resource_version: str = field(default="", compare=False)
    uid: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        """The run's name (= the first attempt's object name)."""
        return self.job.name

    @property
    def current(self) -> AttemptRecord:
        """The newest attempt."""
        return self.attempts[-1]

    def sealed(self) -> RunRecord:
        """A copy carrying its own `spec_digest`, as the submitting client writes it."""
        return replace(self, spec_digest=spec_digest(self))

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
            **({"spec_digest": self.spec_digest} if self.spec_digest else {}),
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
        before records carried one) reads as before; a newer one is a `ConfigError`. Any
        other damage (a missing key, a value of the wrong type or shape, JSON nested too deep,
        more than a ConfigMap can hold) is a `ValueError` saying which key and why: the value
        is checked whole here, so nothing later meets a record it cannot use."""
        data = _checked_data(obj)
        job = _spec(TrainingJob, data, "spec.yaml")
        paths = _parsed(_PATHS, data, "files.json")
        key = legacy_config_map_key
        if data.get("code.configmap") == (obj.get("metadata") or {}).get("name"):
            code, key = data, config_map_key  # schema 3: the record carries its code
        if paths:
            missing = [p for p in paths if key(p) not in (code or {})]
            if missing:
                raise ValueError(
                    f"its code ConfigMap {excerpt(data.get('code.configmap'))} lacks "
                    f"{excerpt(missing)}: it was deleted or edited"
                )
            job = job.with_changes(files={p: (code or {})[key(p)] for p in paths})
        submitted_at = _text(data, "submitted_at") or "0"
        try:
            when = float(submitted_at)
        except ValueError:
            when = math.nan
        if not math.isfinite(when):
            raise ValueError(f"submitted_at {excerpt(submitted_at)!r} is not a number of seconds")
        if _text(data, "cancelled") not in ("", "true", "false"):
            raise ValueError(f"cancelled {excerpt(data['cancelled'])!r} is neither true nor false")
        return cls(
            job=job,
            submitted_at=when,
            retry=_spec(RetryPolicy, data, "retry.yaml")
            if _text(data, "retry.yaml").strip()
            else None,
            attempts=_attempts(job.name, _parsed(_ATTEMPTS, data, "attempts.json")),
            history=tuple(_transition(t) for t in _parsed(_HISTORY, data, "history.json")),
            cancelled=data.get("cancelled") == "true",
            spec_digest=_text(data, "spec_digest"),
            resource_version=str((obj.get("metadata") or {}).get("resourceVersion") or ""),
            uid=str((obj.get("metadata") or {}).get("uid") or ""),
        )


def spec_digest(record: RunRecord) -> str:
    """What the submitter asked for, as one sha256: the spec, the retry policy, the code files
    and the submission time. The submitting client writes it into the record and onto the
    first attempt object, which it creates with its own rights; the controller acts for a
    record only when an attempt object of that run carries the digest it recomputes from the
    record, so a record nobody with the right to create that workload wrote, or whose spec
    was edited since, makes it create nothing.

    Example:
        >>> job = TrainingJob(name="a", image="i", command=["x"])
        >>> spec_digest(RunRecord(job=job, submitted_at=0.0))[:7]
        'sha256:'
        >>> edited = job.with_changes(image="attacker/img")
        >>> spec_digest(RunRecord(job=job, submitted_at=0.0)) == spec_digest(
        ...     RunRecord(job=edited, submitted_at=0.0))
        False
    """
    # The fields spec.yaml and retry.yaml hold, as canonical JSON (sorted keys): the same
    # whichever order a mapping was written in, and twenty times cheaper than YAML, which the
    # controller would otherwise emit for every record on every pass.
    spec = record.job.model_dump(mode="json", exclude_defaults=True, exclude={"files"})
    retry = record.retry.model_dump(mode="json", exclude_defaults=True) if record.retry else None
    signed = [spec, retry, sorted(record.job.files.items()), repr(record.submitted_at)]
    body = json.dumps(signed, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class _StoredTransition:
    """One entry of `history.json` as `_transition_dict` writes it (the shape it must have)."""

    state: RunState
    reason: str = ""
    message: str = ""
    cause: FailureCause | None = None
    attempt: int = 1
    at: float = 0.0
    detail: str = ""
    key: str = ""


@cache
def _adapter(shape: Any) -> TypeAdapter[Any]:
    return TypeAdapter(shape)


_PATHS, _ATTEMPTS, _HISTORY = list[str], list[AttemptRecord], list[_StoredTransition]
_Spec = TypeVar("_Spec", TrainingJob, RetryPolicy)


def _text(data: dict[str, Any], key: str, *, required: bool = False) -> str:
    if key not in data:
        if required:
            raise ValueError(f"it has no {key}")
        return ""
    return str(data[key])


def _spec(model: type[_Spec], data: dict[str, Any], key: str) -> _Spec:
    try:
        return model.from_yaml(_text(data, key, required=True))
    except SpecError as exc:
        raise ValueError(f"{key}: {exc.what}") from None


def _parsed(shape: Any, data: dict[str, Any], key: str) -> Any:
    """The JSON value under `key` (an empty list when absent), checked against `shape`. The
    parser is pydantic's (jiter): it refuses nesting deeper than 200 levels by itself, without
    Python recursion, and strict mode takes no string for a number nor a number for a flag."""
    text = _text(data, key) or "[]"
    try:
        return _adapter(shape).validate_json(text, strict=True)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise ValueError(f"{key}{where}: {first['msg']}") from None


def _attempts(run: str, found: list[AttemptRecord]) -> tuple[AttemptRecord, ...]:
    """The attempts, once they are what a writer of records makes: at least one, numbered
    1, 2, ... in order, each under its deterministic name, each ended in a known state."""
    if not found:
        raise ValueError("attempts.json lists no attempt (every run has one)")
    ends = {"", *(s.value for s in RunState)}
    for number, attempt in enumerate(found, start=1):
        at = f"attempts.json[{number - 1}]"
        if attempt.attempt != number:
            raise ValueError(f"{at}.attempt is {attempt.attempt}, not {number}")
        if attempt.name != attempt_name(run, number):
            raise ValueError(
                f"{at}.name is {excerpt(attempt.name)!r}, not {attempt_name(run, number)!r}"
            )
        if attempt.outcome not in ends:
            raise ValueError(f"{at}.outcome {excerpt(attempt.outcome)!r} is no run state")
    return tuple(found)


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
    """The record's data, once its schema is one this SDK reads and it holds what the API
    server lets a ConfigMap hold: text values, at most `MAX_RECORD_CHARS` of them."""
    data: dict[str, Any] = obj.get("data") or {}
    meta = obj.get("metadata") or {}
    where = f"run record ConfigMap {meta.get('namespace', '')}/{meta.get('name', '')}"
    record_schema(where, data, RUN_RECORD_SCHEMA)
    wrong = sorted(str(k) for k, v in data.items() if not isinstance(v, str))
    if wrong:
        raise ValueError(f"its {excerpt(', '.join(wrong))} hold no text")
    size = sum(len(v) for v in data.values())
    if size > MAX_RECORD_CHARS:
        raise ValueError(
            f"it holds {size} characters, more than a ConfigMap can ({MAX_RECORD_CHARS})"
        )
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


def _transition(t: _StoredTransition) -> Transition:
    if t.attempt < 1 or not math.isfinite(t.at):
        raise ValueError(f"history.json has an entry of attempt {t.attempt} at {t.at}")
    status = RunStatus(t.state, t.reason, t.message, t.cause)
    return Transition(status, t.attempt, t.at, t.detail, t.key)
