"""A malformed or foreign record affects only its own run, and a cancel applies only to the
submission it was written for."""

from __future__ import annotations

import time
from typing import Any

import pytest

from gkeml_sdk import RunState
from gkeml_sdk.errors import ClusterError

from .conftest import make_client
from .replay import Replayer
from .test_scenarios import gang


def configmap(name: str, data: dict[str, str], labels: dict[str, str] | None = None) -> Any:
    meta: dict[str, Any] = {"name": name, "namespace": "ml"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


RECORD_LABELS = {"gkeml.dev/run-record": "true", "gkeml.dev/run-id": "broken"}


def test_a_foreign_configmap_with_a_record_name_affects_only_that_name(cluster):
    cluster.store.put(configmap("mine-gkeml-run", {"settings": "a user's own data"}))
    client = make_client(cluster)
    with pytest.raises(ClusterError) as refused:
        client.get_run("mine")
    assert "ConfigMap ml/mine-gkeml-run" in str(refused.value)
    assert "gkeml did not write it" in str(refused.value)
    with pytest.raises(ClusterError):
        client.submit(gang("mine"))  # never overwrites the user's ConfigMap
    assert cluster.store.get("configmaps", "ml", "mine-gkeml-run")["data"] == {
        "settings": "a user's own data"
    }
    assert client.submit(gang("other")).name == "other"
    assert [r.name for r in client.runs()] == ["other"]  # unlabelled: not a record at all


def test_a_damaged_record_is_listed_as_unreadable_and_others_still_work(cluster):
    damaged = {"schema": "2", "spec.yaml": "name: broken\n", "attempts.json": "[{not json"}
    cluster.store.put(configmap("broken-gkeml-run", damaged, RECORD_LABELS))
    client = make_client(cluster)
    client.submit(gang("fine"))
    listed = {r.name: r.state for r in client.runs()}
    assert listed["broken"].state is RunState.UNREADABLE
    assert "ConfigMap ml/broken-gkeml-run" in listed["broken"].message
    assert "damaged" in listed["broken"].message
    assert listed["fine"].state is not RunState.UNREADABLE
    with pytest.raises(ClusterError, match="ConfigMap ml/broken-gkeml-run"):
        client.get_run("broken")


def test_a_leftover_cancel_marker_does_not_cancel_a_later_submission(cluster):
    client = make_client(cluster)
    first = client.submit(gang())
    first.cancel()
    assert client.get_run("train").state.state is RunState.CANCELLED
    # The finished run's objects go; its marker is left behind (a client died before
    # cleaning it, or an older gkeml wrote it).
    cluster.wait_for(lambda: cluster.store.get("jobsets", "ml", "train") is None)
    marker = cluster.store.get("configmaps", "ml", "train-gkeml-cancelled")
    cluster.store.delete("configmaps", "ml", "train-gkeml-run")
    time.sleep(0.01)  # the next submission is later than the marker
    second = client.submit(gang())
    cluster.store.put(marker)  # still there when the new submission is read
    replay = Replayer(cluster, "ml", "train", 1, "train")
    thread = replay.play_in_background("jobset-succeeded", "train", watchers=3)
    assert second.wait(timeout=30).state is RunState.SUCCEEDED
    thread.join()
    assert make_client(cluster).get_run("train").state.state is RunState.SUCCEEDED
