"""The records gkeml keeps in the cluster (the run record ConfigMap, the tenant status
ConfigMap) carry a schema; those written before they did load as before, and a newer or unknown
schema is refused with what to do."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gkeml_sdk.backends.kubernetes.runs.run_record import RUN_RECORD_SCHEMA, RunRecord
from gkeml_sdk.backends.kubernetes.standby.tenant_status import TENANT_STATUS_SCHEMA, TenantStatus
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.version import __version__
from tests.stored_records import (
    CODE,
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


def test_a_run_record_carries_its_schema_and_round_trips() -> None:
    record = expected_run_record()
    written = record.to_configmap()
    assert written["data"]["schema"] == str(RUN_RECORD_SCHEMA) == "3"
    # Schema 2 kept every key of the layout before it and added transition keys and counters;
    # schema 3 carries the code files itself, under `file.` keys, and names itself as their
    # ConfigMap, so reading it needs no second object.
    code_keys = {f"file.{path}" for path in CODE}
    assert set(written["data"]) - {"schema"} - code_keys == set(UNVERSIONED_RUN_RECORD["data"])
    assert {k: written["data"][k] for k in code_keys} == {f"file.{p}": t for p, t in CODE.items()}
    assert written["data"]["code.configmap"] == written["metadata"]["name"] == "ft-gkeml-run"
    assert RunRecord.code_config_map(written) == ""  # nothing else to fetch
    assert '"key": ""' in written["data"]["history.json"]
    assert '"counters": {}' in written["data"]["attempts.json"]
    assert RunRecord.from_configmap(written) == record


def test_a_run_record_of_a_newer_schema_is_refused_before_its_code_is_fetched() -> None:
    # A newer layout may keep none of today's keys: only the schema is looked at.
    newer = {"metadata": {"name": "ft-gkeml-run", "namespace": "ml"}, "data": {"schema": "4"}}
    for read in (RunRecord.code_config_map, RunRecord.from_configmap):
        with pytest.raises(ConfigError) as refused:
            read(newer)
        assert str(refused.value) == newer_refusal("run record ConfigMap ml/ft-gkeml-run", 4, 3)


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
    assert f"gkeml {__version__} reads schema 3" in str(refused.value)


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
