"""`runs()` reads no code: it lists the run records as metadata only (what a row shows is in
their annotations since schema 4), so a run shipping 500 KB of code costs its listing a few
hundred bytes, with the same rows a whole read gives. Records of the previous layout still
list (read whole), and a run listed without its code is read whole before anyone acts for it."""

from __future__ import annotations

import copy
from typing import Any

from gkeml_sdk import RunState
from gkeml_sdk.backends.kubernetes.runs.run_record import RECORD_ANNOTATION
from tests.record_fields import record_fields, set_record_field

from .clones import put_copy, run_objects
from .conftest import make_client
from .test_runs_listing import play, seen
from .test_scenarios import gang

RUNS = 20
CODE = {"train.py": "# " + "x" * 500_000 + "\n"}
KB = 1024


def coded(name: str) -> Any:
    return gang(name, files=CODE, command=["python", "train.py"])


def many_runs(cluster: Any) -> None:
    """`RUNS` runs, each with 500 KB of code, running as the cluster runs them."""
    make_client(cluster).submit(coded("zqseed"))
    play(cluster, "zqseed", "jobset-succeeded", "train", until=2.0)
    seed = run_objects(cluster, "zqseed")
    for i in range(RUNS - 1):
        put_copy(cluster, seed, "zqseed", f"copy-{i:02d}")


def sent(cluster: Any) -> int:
    return sum(r.sent for r in cluster.request_log)


def as_schema_3(obj: dict[str, Any]) -> dict[str, Any]:
    """A record as the previous gkeml (schema 3) wrote it: every key in its data."""
    old = copy.deepcopy(obj)
    meta = old["metadata"]
    meta["annotations"] = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if not k.startswith(RECORD_ANNOTATION)
    }
    old["data"] = {**record_fields(obj), "schema": "3", "code.configmap": meta["name"]}
    for field in ("resourceVersion", "managedFields"):
        meta.pop(field, None)
    return old


def record_reads(cluster: Any) -> list[Any]:
    return [r for r in cluster.request_log if "/configmaps" in r.path]


def test_a_listing_of_runs_with_500_kb_of_code_each_reads_under_5_kb_of_records_a_run(cluster):
    many_runs(cluster)
    client = make_client(cluster)
    cluster.clear_request_log()
    listed = {r.name: seen(r) for r in client.runs()}
    assert len(listed) == RUNS
    assert {row[0].state for row in listed.values()} == {RunState.RUNNING}
    records = record_reads(cluster)
    assert sum(r.sent for r in records) < RUNS * 5 * KB
    selector = "gkeml.dev/run-record=true"
    accept = [r.headers["accept"] for r in records if r.query.get("labelSelector") == selector]
    assert accept == ["application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"]
    # The whole listing (the attempt objects too) costs the same with the code cut to a line.
    with_code = sent(cluster)
    for name in listed:
        record = cluster.store.get("configmaps", "ml", f"{name}-gkeml-run")
        record["data"]["file.train.py"] = "#\n"
        cluster.store.put(record)
    cluster.clear_request_log()
    assert {r.name: seen(r) for r in client.runs()} == listed
    assert abs(sent(cluster) - with_code) < RUNS * 16, (sent(cluster), with_code)
    # The rows are what each run's own read of its whole record says.
    for name, row in listed.items():
        assert row == seen(make_client(cluster).get_run(name)), name


def test_records_of_the_previous_layout_list_the_same_rows_read_whole(cluster):
    many_runs(cluster)
    before = {r.name: seen(r) for r in make_client(cluster).runs()}
    for i in range(RUNS - 1):
        record = cluster.store.get("configmaps", "ml", f"copy-{i:02d}-gkeml-run")
        cluster.store.put(as_schema_3(record))
    cluster.clear_request_log()
    after = {r.name: seen(r) for r in make_client(cluster).runs()}
    assert after == before
    assert sum(r.sent for r in record_reads(cluster)) > (RUNS - 1) * 500_000  # the code too
    gets = [r.path for r in cluster.request_log if r.path.endswith("-gkeml-run")]
    assert sorted(gets) == sorted(
        f"/api/v1/namespaces/ml/configmaps/copy-{i:02d}-gkeml-run" for i in range(RUNS - 1)
    )  # one GET each for the old layout, none for the new


def test_a_damaged_annotation_lists_its_run_as_unreadable(cluster):
    many_runs(cluster)
    record = cluster.store.get("configmaps", "ml", "copy-00-gkeml-run")
    set_record_field(record, "attempts.json", "[]")
    cluster.store.put(record)
    listed = {r.name: r.state for r in make_client(cluster).runs()}
    assert listed["copy-00"].state is RunState.UNREADABLE
    assert "attempts.json lists no attempt" in listed["copy-00"].message
    assert {s.state for n, s in listed.items() if n != "copy-00"} == {RunState.RUNNING}


def test_a_run_listed_without_its_code_is_read_whole_before_it_is_acted_for(cluster):
    make_client(cluster).submit(coded("train"))
    client = make_client(cluster)
    [run] = client.runs()
    play(cluster, "train", "jobset-succeeded", "train")
    assert run.wait(timeout=30).state is RunState.SUCCEEDED  # this client records the end
    stored = cluster.store.get("configmaps", "ml", "train-gkeml-run")
    assert stored["data"]["file.train.py"] == CODE["train.py"]  # the save kept the code
    assert '"outcome": "Succeeded"' in record_fields(stored)["attempts.json"]
