"""The run record: a ConfigMap that keeps a run's spec, retry policy, attempts and history in
the cluster, so any client (or a restarted one) can follow and resume the same run.

Over 400 lines because it is the one writer and reader of the record's stored layout (four
schemas, and the metadata-only form a listing reads): the checks that keep a damaged record
from reaching anything that acts sit beside the writer they mirror."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
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
from gkeml_sdk.training.code import CODE_KEY_PREFIX, config_map_key, legacy_config_map_key
from gkeml_sdk.training.code_configmap import code_config_map
from gkeml_sdk.training.model import TrainingJob

RECORD_LABEL = "gkeml.dev/run-record"
# The record's layout (key `schema`, a string as all ConfigMap data). 1 is also what a
# record written before records carried a schema holds; 2 added each transition's `key` and
# each attempt's `counters` (a schema-1 record loads with them empty); 3 carries the code files
# itself (keys `file.<path>`, which the pods mount), where 1 and 2 named a `<run>-code`
# ConfigMap in `code.configmap`; 4 moves what a listing reads (everything but the code and
# its paths) from the data to the annotations `record.gkeml.dev/<key>`, so that a listing
# asks for metadata only and reads no code.
RUN_RECORD_SCHEMA = 4
RECORD_ANNOTATION = "record.gkeml.dev/"
# What kube-apiserver lets one object's annotations add up to (TotalAnnotationSizeLimitB,
# keys and values): a record whose annotations are larger was not written through it.
MAX_ANNOTATION_BYTES = 256 * 1024
# The spec goes to the annotations up to this size, beside the history (at most
# RECORD_HISTORY_MAX_BYTES) and the attempts; a larger one (a large env, say) stays in the
# data, and a listing reads that record whole.
SPEC_ANNOTATION_MAX_BYTES = 128 * 1024
# What the API server lets one ConfigMap's values add up to (kube-apiserver's MaxSecretSize,
# which ValidateConfigMap applies): a record larger than that was not written through it.
MAX_RECORD_CHARS = 1024 * 1024
# The kind of what a metadata-only read returns for each object (its data left out).
PARTIAL_KIND = "PartialObjectMetadata"
# Where the submitting client puts the record's `spec_digest` on the attempt object it creates
# with its own rights; every attempt the controller creates copies it (see `spec_digest`).
SPEC_DIGEST_ANNOTATION = "gkeml.dev/spec-digest"
__all__ = [
    "MAX_ANNOTATION_BYTES",
    "MAX_RECORD_CHARS",
    "PARTIAL_KIND",
    "RECORD_ANNOTATION",
    "RECORD_LABEL",
    "RUN_RECORD_SCHEMA",
    "SPEC_DIGEST_ANNOTATION",
    "AttemptRecord",
    "RunRecord",
    "attempt_name",
    "listable",
    "record_name",
    "spec_digest",
    "written_part",
]


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
    # False for a record a metadata-only listing read: its job carries no code files, so it
    # is only shown, never written back, vouched for or acted on (`whole` before that).
    whole: bool = field(default=True, compare=False)
    # The spec's YAML as read, with the job read from it: written back as it was while the
    # record holds that job, so a save (one per state change) does not dump the spec again.
    spec_text: tuple[TrainingJob, str] | None = field(default=None, compare=False, repr=False)

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
        """The record as a ConfigMap in the run's namespace: what a listing reads in its
        annotations, the code files (the keys the pods mount) and their paths in its data."""
        if not self.whole:
            raise ValueError(
                f"the record of run {self.name!r} was read by a listing, without its code: "
                "read it whole before writing it"
            )
        fields = {
            SCHEMA_KEY: str(RUN_RECORD_SCHEMA),
            "spec.yaml": self.spec_text[1]
            if self.spec_text is not None and self.spec_text[0] is self.job
            else _spec_yaml(self.job),
            "retry.yaml": self.retry.to_yaml() if self.retry else "",
            "attempts.json": json.dumps([a.__dict__ for a in self.attempts]),
            "history.json": _history_json(self.history),
            "submitted_at": repr(self.submitted_at),
            "cancelled": "true" if self.cancelled else "false",
            **({"spec_digest": self.spec_digest} if self.spec_digest else {}),
        }
        data = {SCHEMA_KEY: fields[SCHEMA_KEY], "files.json": json.dumps(sorted(self.job.files))}
        if len(_utf8(fields["spec.yaml"])) > SPEC_ANNOTATION_MAX_BYTES:
            data["spec.yaml"] = fields.pop("spec.yaml")
        # Record and code are one write: the code files are this ConfigMap's `file.*` keys.
        code = code_config_map(self.job)
        return {
            "apiVersion": kinds.CORE,
            "kind": "ConfigMap",
            "metadata": {
                "name": record_name(self.name),
                "namespace": self.job.namespace,
                "labels": {RECORD_LABEL: "true", RUN_ID_LABEL: self.name, **sdk_labels()},
                "annotations": {RECORD_ANNOTATION + k: v for k, v in fields.items()},
            },
            "data": {**data, **(code["data"] if code else {})},
        }

    @staticmethod
    def code_config_map(obj: dict[str, Any]) -> str:
        """Name of the other ConfigMap holding the recorded job's code files ('' when it has
        none, or carries them itself as records since schema 3 do); `from_configmap` then
        needs its data. Refuses a record this SDK cannot read."""
        fields, _ = _stored(obj)
        name = str(fields.get("code.configmap", ""))
        return "" if name == (obj.get("metadata") or {}).get("name") else name

    @classmethod
    def from_configmap(cls, obj: dict[str, Any], code: dict[str, str] | None = None) -> RunRecord:
        """Read a record written by `to_configmap`; `code` is the data of the job's code
        ConfigMap when `code_paths(obj)` is not empty. A record without `schema` (written
        before records carried one) reads as before; a newer one is a `ConfigError`. Any
        other damage (a missing key, a value of the wrong type or shape, JSON nested too deep,
        more than a ConfigMap can hold) is a `ValueError` saying which key and why: the value
        is checked whole here, so nothing later meets a record it cannot use. `obj` may be
        a metadata-only listing's item (see `listable`): the record then lacks its code
        (`whole` False)."""
        data, whole = _stored(obj)
        job = _spec(TrainingJob, data, "spec.yaml")
        if whole:
            job = job.with_changes(files=_code(obj, data, code))
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
            whole=whole,
            spec_text=(job, _text(data, "spec.yaml")),
        )


def listable(obj: dict[str, Any]) -> bool:
    """Whether a metadata-only listing's item says all a listing shows of its run: a record
    since schema 4 whose spec fits its annotations. Any other (an older layout, a spec kept
    in the data, another ConfigMap) is to be read whole.

    Example:
        >>> listable({"kind": "PartialObjectMetadata", "metadata": {"annotations": {}}})
        False
    """
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return f"{RECORD_ANNOTATION}{SCHEMA_KEY}" in annotations and (
        f"{RECORD_ANNOTATION}spec.yaml" in annotations
    )


def written_part(obj: dict[str, Any]) -> tuple[Any, Any]:
    """What a write of a record sets (its data and its record annotations): the same for two
    reads of one write, whatever the server added (a retried write finds itself by it).

    Example:
        >>> job = TrainingJob(name="a", image="i", command=["x"])
        >>> body = RunRecord(job=job, submitted_at=0.0).to_configmap()
        >>> served = {**body, "metadata": {**body["metadata"], "uid": "u", "resourceVersion": "7"}}
        >>> written_part(served) == written_part(body)
        True
    """
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    ours = {k: v for k, v in annotations.items() if str(k).startswith(RECORD_ANNOTATION)}
    return obj.get("data"), ours


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
    if not record.whole:
        raise ValueError(f"the record of run {record.name!r} was read without its code")
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


def _stored(obj: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The record's keys (from its annotations since schema 4, else from its data), once its
    schema is one this SDK reads and it holds what the API server lets a ConfigMap hold: text
    values, at most `MAX_RECORD_CHARS` of data and `MAX_ANNOTATION_BYTES` of annotations; and
    whether the object is whole (not a metadata-only listing's item)."""
    meta = obj.get("metadata") or {}
    where = f"run record ConfigMap {meta.get('namespace', '')}/{meta.get('name', '')}"
    whole = obj.get("kind") != PARTIAL_KIND
    data: dict[str, Any] = obj.get("data") or {}
    annotations: dict[str, Any] = meta.get("annotations") or {}
    listed = {
        k[len(RECORD_ANNOTATION) :]: v
        for k, v in annotations.items()
        if isinstance(k, str) and k.startswith(RECORD_ANNOTATION)
    }
    wrong = [k for k, v in [*data.items(), *listed.items()] if not isinstance(v, str)]
    if wrong:
        raise ValueError(f"its {excerpt(', '.join(sorted(map(str, wrong))))} hold no text")
    # As kube-apiserver counts: a ConfigMap's data by its values, annotations with their keys
    # in bytes (TotalAnnotationSizeLimitB).
    annotated = sum(len(_utf8(k)) + len(_utf8(v)) for k, v in annotations.items())
    for what, size, unit, limit in (
        ("data", sum(len(v) for v in data.values()), "characters", MAX_RECORD_CHARS),
        ("annotations", annotated, "bytes", MAX_ANNOTATION_BYTES),
    ):
        if size > limit:
            raise ValueError(f"its {what} hold {size} {unit}, more than a ConfigMap can ({limit})")
    # The data's schema also stops a gkeml older than schema 4, which reads only the data.
    schema = record_schema(where, data, RUN_RECORD_SCHEMA) if whole else RUN_RECORD_SCHEMA
    if not listed:
        if schema >= 4:
            raise ValueError(f"its {RECORD_ANNOTATION} annotations are missing")
        return data, whole
    record_schema(where, listed, RUN_RECORD_SCHEMA)
    # Since schema 4 the data holds the code paths (and a spec too large for annotations);
    # any other key of the record left there is read too, the annotations' winning.
    kept = {k: v for k, v in data.items() if not k.startswith(CODE_KEY_PREFIX)}
    return {**kept, **listed}, whole


def _utf8(text: object) -> bytes:
    return str(text).encode("utf-8", "surrogatepass")


def _code(
    obj: dict[str, Any], fields: dict[str, Any], code: dict[str, str] | None
) -> dict[str, str]:
    """The job's code files: from the record's own data (since schema 3) or from `code`, the
    data of the code ConfigMap that older records name."""
    paths = _parsed(_PATHS, fields, "files.json")
    data = obj.get("data") or {}
    key = legacy_config_map_key
    own = (obj.get("metadata") or {}).get("name")
    if fields.get("code.configmap", own) == own:  # schema 3 names itself, 4 nothing
        code, key = data, config_map_key  # the record carries its code
    missing = [p for p in paths if key(p) not in (code or {})]
    if missing:
        raise ValueError(
            f"its code ConfigMap {excerpt(fields.get('code.configmap') or own)} lacks "
            f"{excerpt(missing)}: it was deleted or edited"
        )
    return {p: (code or {})[key(p)] for p in paths}


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
