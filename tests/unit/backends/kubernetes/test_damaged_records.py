"""Any damage to a run record's ConfigMap (a `kubectl edit`, another tool, a newer gkeml) is one
gkeml error naming that ConfigMap, raised when it is read: never a foreign exception, there or
later in code that uses the record it returned."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gkeml_sdk import RetryPolicy, TrainingJob
from gkeml_sdk.backends.kubernetes.runs.lifecycle import (
    next_attempt,
    run_counters,
    spot_losses,
)
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    MAX_RECORD_CHARS,
    AttemptRecord,
    RunRecord,
    spec_digest,
)
from gkeml_sdk.backends.kubernetes.runs.run_records import RunRecords
from gkeml_sdk.errors import ClusterError, ConfigError, excerpt
from gkeml_sdk.runs.handle import FailureCause, RunState, RunStatus, Transition
from tests.record_fields import set_record_field

WHERE = "ConfigMap ml/ft-gkeml-run"
MISSING = object()


@functools.cache
def honest() -> RunRecord:
    job = TrainingJob(
        name="ft", image="i", command=["python", "t.py"], namespace="ml", files={"t.py": "1\n"}
    )
    lost = RunStatus(RunState.FAILED, "NodeLost", "spot", FailureCause.INFRASTRUCTURE)
    return RunRecord(
        job=job,
        submitted_at=1767225600.5,
        retry=RetryPolicy(max_resubmits=3),
        attempts=(
            AttemptRecord(1, "ft", True, "Failed", "u1", {"disruptions": 1}),
            AttemptRecord(2, "ft--r2", False, "", "u2"),
        ),
        history=(Transition(lost, 1, 12.5, "node n1", "ft/lost/1"),),
    ).sealed()


def read(obj: dict[str, Any]) -> RunRecord:
    """What every client and the controller do with a record ConfigMap they list."""
    return RunRecords(cast(Any, None)).read(obj, near=lambda name: None)


def use(record: RunRecord) -> None:
    """What the controller and a handle do with a record they read."""
    assert record.current.attempt == len(record.attempts)
    spec_digest(record)
    run_counters(record, None)
    next_attempt(record, RunStatus(RunState.FAILED, cause=FailureCause.INFRASTRUCTURE), 0)
    spot_losses(record)
    assert RunRecord.from_configmap(record.to_configmap()) == record


def damaged(field: str, value: object) -> dict[str, Any]:
    obj = copy.deepcopy(honest().to_configmap())
    set_record_field(obj, field, None if value is MISSING else value)
    return obj


def refused(obj: dict[str, Any]) -> str:
    with pytest.raises((ClusterError, ConfigError)) as caught:
        read(obj)
    assert WHERE in str(caught.value)
    return str(caught.value)


# Deeper than Python's recursion limit (json.loads raised RecursionError), libyaml's C stack
# (a crash) and pydantic's limit.
DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "x" * (2 * 1024 * 1024)
# Damage any field can take: what `kubectl edit` or another tool may leave there.
KINDS: dict[str, object] = {
    "empty list": "[]",
    "null": "null",
    "number": "7",
    "garbage": "{not json",
    "deep": DEEP,
    "huge": HUGE,
    "missing": MISSING,
    "bad yaml": "name: [a",
    "mapping": '{"a": 1}',
}
FIELDS = [
    "spec.yaml",
    "retry.yaml",
    "files.json",
    "attempts.json",
    "history.json",
    "submitted_at",
    "cancelled",
    "schema",
    "code.configmap",
    "spec_digest",
]
# The combinations that leave a record gkeml wrote, or one it reads as such.
STILL_A_RECORD = {
    ("history.json", "empty list"),
    ("history.json", "missing"),
    ("files.json", "empty list"),  # a run without code files
    ("files.json", "missing"),
    ("retry.yaml", "missing"),  # a run without a RetryPolicy
    ("submitted_at", "number"),
    ("submitted_at", "missing"),
    ("cancelled", "missing"),
    ("schema", "missing"),  # a record written before records carried a schema
    ("code.configmap", "missing"),  # since schema 4 a record names no code ConfigMap
    ("spec_digest", "null"),  # the controller refuses such a record, readers do not
    ("spec_digest", "number"),
    ("spec_digest", "empty list"),
    ("spec_digest", "garbage"),
    ("spec_digest", "missing"),
    ("spec_digest", "bad yaml"),
    ("spec_digest", "mapping"),
    ("spec_digest", "deep"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("field", FIELDS)
def test_every_damage_to_any_field_is_one_error_naming_the_configmap(field, kind):
    obj = damaged(field, KINDS[kind])
    if (field, kind) in STILL_A_RECORD:
        use(read(obj))
    else:
        said = refused(obj)
        assert len(said) < 2_000, "a message quotes no more than an excerpt of the record"


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("attempts.json", "[]", "attempts.json lists no attempt"),
        ("attempts.json", '[{"attempt": "1", "name": "ft", "spot": true}]',
         "attempts.json[0].attempt: Input should be a valid integer"),
        ("attempts.json", '[{"attempt": 1, "name": "ft", "spot": 1}]',
         "attempts.json[0].spot: Input should be a valid boolean"),
        ("attempts.json", "[1]", "attempts.json[0]: Input should be"),
        ("attempts.json", '[{"attempt": 1, "name": "other", "spot": true}]',
         "attempts.json[0].name is 'other', not 'ft'"),
        ("attempts.json", '[{"attempt": 2, "name": "ft--r2", "spot": true}]',
         "attempts.json[0].attempt is 2, not 1"),
        ("attempts.json", '[{"attempt": 1, "name": "ft", "spot": true, "outcome": "Gone"}]',
         "attempts.json[0].outcome 'Gone' is no run state"),
        ("attempts.json", '[{"attempt": 1, "name": "ft", "spot": true, "counters": {"a": "1"}}]',
         "attempts.json[0].counters.a: Input should be a valid integer"),
        ("history.json", '["x"]', "history.json[0]: Input should be"),
        ("history.json", '[{"state": "Bogus"}]', "history.json[0].state: Input should be"),
        ("history.json", '[{"state": "Failed", "attempt": "2"}]',
         "history.json[0].attempt: Input should be a valid integer"),
        ("history.json", '[{"state": "Failed", "attempt": 0}]', "an entry of attempt 0"),
        ("history.json", '[{"state": "Failed", "at": NaN}]', "at nan"),
        ("history.json", DEEP, "history.json: Invalid JSON: recursion limit exceeded"),
        ("files.json", '[["t.py"]]', "files.json[0]: Input should be a valid string"),
        ("files.json", '["nope.py"]', "lacks ['nope.py']"),
        ("submitted_at", "soon", "submitted_at 'soon' is not a number of seconds"),
        ("submitted_at", "inf", "submitted_at 'inf' is not a number of seconds"),
        ("cancelled", "yes", "cancelled 'yes' is neither true nor false"),
        ("spec.yaml", HUGE, "annotations hold 2097"),
        ("files.json", HUGE, "more than a ConfigMap can (1048576)"),
        ("spec.yaml", "name: [a", "spec.yaml: TrainingJob: not valid YAML at line 1"),
        ("spec.yaml", "- a\n", "spec.yaml: TrainingJob YAML must be a mapping of fields"),
        ("spec.yaml", MISSING, "it has no spec.yaml"),
        ("schema", "99", "has schema 99, but gkeml"),
    ],
    ids=lambda v: excerpt(v, 30) if isinstance(v, str) else "missing",
)  # fmt: skip
def test_each_damage_says_which_key_and_why(field, value, says):
    assert says in refused(damaged(field, value))


def test_a_value_that_is_no_text_is_refused():
    # The API server keeps ConfigMap data as strings; only a broken store or proxy differs.
    assert "its attempts.json hold no text" in refused(damaged("attempts.json", [1]))


def test_the_limit_is_what_a_configmap_holds():
    obj = copy.deepcopy(honest().to_configmap())
    room = MAX_RECORD_CHARS - sum(len(v) for v in obj["data"].values())
    obj["data"]["file.pad"] = "x" * room
    read(obj)  # exactly full: still a record
    obj["data"]["file.pad"] += "x"
    assert "more than a ConfigMap can" in refused(obj)


def test_a_record_naming_another_namespace_or_run_is_refused():
    elsewhere = damaged("spec.yaml", "name: ft\nimage: i\ncommand: [x]\nnamespace: team-b\n")
    assert "names run 'ft' in namespace 'team-b'" in refused(elsewhere)
    other = damaged("spec.yaml", "name: other\nimage: i\ncommand: [x]\nnamespace: ml\n")
    set_record_field(other, "attempts.json", '[{"attempt": 1, "name": "other", "spot": false}]')
    assert "names run 'other' in namespace 'ml'" in refused(other)
    labelled = damaged("schema", "3")
    labelled["metadata"]["labels"]["gkeml.dev/run-id"] = "other"
    assert "names run 'ft' in namespace 'ml'" in refused(labelled)


def test_the_spec_digest_survives_the_round_trip_and_covers_what_runs():
    record = honest()
    assert read(record.to_configmap()).spec_digest == record.spec_digest == spec_digest(record)
    for changed in (
        record.job.with_changes(image="attacker/img"),
        record.job.with_changes(namespace="team-b"),
        record.job.with_changes(files={"t.py": "import os\n"}),
    ):
        assert spec_digest(RunRecord(changed, record.submitted_at, record.retry)) != (
            record.spec_digest
        )
    later = RunRecord(record.job, record.submitted_at + 1, record.retry)
    assert spec_digest(later) != record.spec_digest


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
ATTEMPT_KEYS = st.sampled_from(["attempt", "name", "spot", "outcome", "uid", "counters"])
TRANSITION_KEYS = st.sampled_from(["state", "reason", "cause", "attempt", "at", "key"])


def shaped(keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Entries close to the real shape: the real keys, any JSON value under each."""
    return st.lists(st.dictionaries(keys, JSON | st.sampled_from([1, "ft", True, "Failed"])))


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    field=st.sampled_from(["attempts.json", "history.json", "files.json"]),
    value=JSON | shaped(ATTEMPT_KEYS) | shaped(TRANSITION_KEYS),
)
def test_any_json_in_a_record_reads_as_a_record_or_one_error(field, value):
    obj = damaged(field, json.dumps(value))
    try:
        record = read(obj)
    except (ClusterError, ConfigError) as exc:
        assert WHERE in str(exc)
    else:
        use(record)
