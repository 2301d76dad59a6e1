"""The records gkeml keeps in the cluster (the run record ConfigMap, the tenant status
ConfigMap) carry a schema; those written before they did load as before, and a newer or unknown
schema is refused with what to do."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gkeml_sdk.backends.kubernetes.runs.run_record import (
    PARTIAL_KIND,
    RECORD_ANNOTATION,
    RUN_RECORD_SCHEMA,
    SPEC_ANNOTATION_MAX_BYTES,
    RunRecord,
    listable,
)
from gkeml_sdk.backends.kubernetes.standby.tenant_status import TENANT_STATUS_SCHEMA, TenantStatus
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.version import __version__
from tests.record_fields import record_field, record_fields
from tests.stored_records import (
    CODE,
    SCHEMA_3_RUN_RECORD,
    UNVERSIONED_RUN_RECORD,
    UNVERSIONED_TENANT_STATUS,
    expected_run_record,
)


def with_schema(obj: dict[str, Any], schema: object) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    changed["data"]["schema"] = schema
    return changed


def newer_refusal(record: str, found: int = 2, reads: int = 1) -> str:
    return (
        f"{record} has schema {found}, but gkeml {__version__} reads schema {reads} (and "
        "records written without one): a newer gkeml wrote it. Upgrade gkeml "
        "(pip install -U gkeml) to read it"
    )


def test_a_run_record_written_before_schemas_loads_as_before() -> None:
    assert RunRecord.code_config_map(UNVERSIONED_RUN_RECORD) == "ft-code"
    assert RunRecord.from_configmap(UNVERSIONED_RUN_RECORD, CODE) == expected_run_record()


def test_a_run_record_of_schema_1_loads_as_before() -> None:
    schema_1 = with_schema(UNVERSIONED_RUN_RECORD, "1")
    assert RunRecord.from_configmap(schema_1, CODE) == expected_run_record()


def test_a_run_record_of_schema_3_loads_as_before() -> None:
    assert RunRecord.code_config_map(SCHEMA_3_RUN_RECORD) == ""  # it carries its code
    assert RunRecord.from_configmap(SCHEMA_3_RUN_RECORD) == expected_run_record()


def test_a_run_record_carries_its_schema_and_round_trips() -> None:
    record = expected_run_record()
    written = record.to_configmap()
    assert written["data"]["schema"] == str(RUN_RECORD_SCHEMA) == "4"
    # Schema 2 kept every key of the layout before it and added transition keys and counters;
    # schema 3 carried the code files itself, under `file.` keys; schema 4 keeps what a
    # listing reads in annotations and only the code and its paths in the data (the schema
    # too, which stops a gkeml that reads only the data).
    code_keys = {f"file.{path}" for path in CODE}
    assert set(written["data"]) == {"schema", "files.json", *code_keys}
    assert {k: written["data"][k] for k in code_keys} == {f"file.{p}": t for p, t in CODE.items()}
    listed = {k for k in written["metadata"]["annotations"] if k.startswith(RECORD_ANNOTATION)}
    assert {k.removeprefix(RECORD_ANNOTATION) for k in listed} == set(
        UNVERSIONED_RUN_RECORD["data"]
    ) - {"files.json", "code.configmap"} | {"schema"}
    assert record_fields(written) == {
        k: v for k, v in SCHEMA_3_RUN_RECORD["data"].items() if k != "code.configmap"
    } | {"schema": "4"}
    assert RunRecord.code_config_map(written) == ""  # nothing else to fetch
    assert '"key": ""' in record_field(written, "history.json")
    assert '"counters": {}' in record_field(written, "attempts.json")
    assert RunRecord.from_configmap(written) == record


def test_a_listing_reads_a_run_record_from_its_metadata_alone() -> None:
    record = expected_run_record()
    written = record.to_configmap()
    partial = {
        "kind": PARTIAL_KIND,
        "apiVersion": "meta.k8s.io/v1",
        "metadata": written["metadata"],
    }
    assert listable(partial)
    listed = RunRecord.from_configmap(partial)
    assert not listed.whole and listed.job.files == {}
    assert listed.attempts == record.attempts and listed.history == record.history
    assert (listed.retry, listed.submitted_at) == (record.retry, record.submitted_at)
    with pytest.raises(ValueError, match="without its code"):
        listed.to_configmap()  # never written back: that would drop the code
    # A spec too large for the annotations stays in the data: such a record is read whole.
    big = record.job.with_changes(env={"BIG": "x" * SPEC_ANNOTATION_MAX_BYTES})
    kept = RunRecord(job=big, submitted_at=1.0, attempts=record.attempts[:1]).to_configmap()
    assert "spec.yaml" in kept["data"]
    assert not listable({"kind": PARTIAL_KIND, "metadata": kept["metadata"]})
    assert RunRecord.from_configmap(kept).job == big


def test_a_run_record_of_a_newer_schema_is_refused_before_its_code_is_fetched() -> None:
    # A newer layout may keep none of today's keys: only the schema is looked at.
    newer = {"metadata": {"name": "ft-gkeml-run", "namespace": "ml"}, "data": {"schema": "5"}}
    for read in (RunRecord.code_config_map, RunRecord.from_configmap):
        with pytest.raises(ConfigError) as refused:
            read(newer)
        assert str(refused.value) == newer_refusal("run record ConfigMap ml/ft-gkeml-run", 5, 4)


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ("0", "has schema 0, an older layout than any this SDK knows"),
        ("-3", "has schema -3, an older layout than any this SDK knows"),
        ("v2", "has schema 'v2', which is no version number"),
        ("", "has schema '', which is no version number"),
    ],
)
def test_a_run_record_of_an_unknown_schema_is_refused(schema: str, says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        RunRecord.from_configmap(with_schema(UNVERSIONED_RUN_RECORD, schema), CODE)
    assert str(refused.value).startswith(f"run record ConfigMap ml/ft-gkeml-run {says}")
    assert f"gkeml {__version__} reads schema 4" in str(refused.value)


def test_a_tenant_status_written_before_schemas_loads_as_before() -> None:
    status = TenantStatus.from_data(UNVERSIONED_TENANT_STATUS)
    assert status == TenantStatus(
        failover_count=2,
        last_failover="2026-01-01T00:00:00Z",
        failing_over=frozenset({"llama"}),
        ready_seen=frozenset({"llama", "qwen"}),
    )
    assert status.allocations == ({"model": "llama", "pod": "p"},)


def test_a_tenant_status_carries_its_schema_and_round_trips() -> None:
    status = TenantStatus.from_data(UNVERSIONED_TENANT_STATUS)
    data = status.data()
    assert data == {"schema": str(TENANT_STATUS_SCHEMA), **UNVERSIONED_TENANT_STATUS}
    assert TENANT_STATUS_SCHEMA == 1
    back = TenantStatus.from_data(data)
    assert (back, back.allocations) == (status, status.allocations)


def test_a_tenant_status_of_a_newer_schema_is_refused() -> None:
    with pytest.raises(ConfigError) as refused:
        TenantStatus.from_data({"schema": "2"}, "team-a/gkeml-tenant-status")
    assert str(refused.value) == newer_refusal("tenant status ConfigMap team-a/gkeml-tenant-status")
