"""A malformed or foreign record affects only its own run, and a cancel applies only to the
submission it was written for: a controller over two namespaces with damaged records in one
never exits and reconciles every other run, and `gkeml runs` lists the damaged ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import Client, KubernetesSettings, RetryPolicy, RunState
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord, RunRecord
from gkeml_sdk.errors import ClusterError, ConfigError
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit
from tests.record_fields import record_field, set_record_field

from .conftest import FAST_RETRY, NAMESPACES, make_client
from .replay import Replayer
from .test_scenarios import gang

ROOT = Path(__file__).resolve().parents[3]
MISSING = None
DEEP_JSON = "[" * 100_000 + "]" * 100_000
# The damage the issue found (each ended the controller, or made `gkeml runs` print a
# traceback) and its kin: (field, value); RUN stands for the record's run name.
DAMAGES: dict[str, tuple[str, str | None]] = {
    "attempts-empty": ("attempts.json", "[]"),  # what any `kubectl edit` may write
    "attempts-null": ("attempts.json", "null"),
    "attempt-number-string": ("attempts.json", '[{"attempt": "1", "name": "RUN", "spot": false}]'),
    "attempt-shape": ("attempts.json", '[["RUN"]]'),
    "history-deep": ("history.json", DEEP_JSON),
    "history-shape": ("history.json", '[{"state": "Failed", "at": "soon"}]'),
    "schema-99": ("schema", "99"),
    "spec-2mib": ("spec.yaml", "x" * (2 * 1024 * 1024)),
    "spec-missing": ("spec.yaml", MISSING),
    "spec-bad-yaml": ("spec.yaml", "name: [a"),
    "spec-deep-yaml": ("spec.yaml", DEEP_JSON),  # once a segfault in libyaml
    "submitted-at-text": ("submitted_at", "yesterday"),
}


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


def damaged(run: str, damage: str, namespace: str = "team-b") -> dict[str, Any]:
    """The record ConfigMap gkeml wrote for run `run`, then damaged as `damage` says."""
    job = gang(run, namespace=namespace)
    record = RunRecord(job=job, submitted_at=1.0, attempts=(AttemptRecord(1, run, False),))
    obj = record.sealed().to_configmap()
    field, value = DAMAGES[damage]
    set_record_field(obj, field, None if value is MISSING else value.replace("RUN", run))
    return obj


def team_b(server: Any) -> Client:
    settings = KubernetesSettings(
        api_client=server.api_client(), namespace="team-b", api_retry=FAST_RETRY
    )
    return Client(kubernetes=settings)


def outcomes(server: Any, namespace: str, run: str) -> list[str]:
    found = server.store.get("configmaps", namespace, f"{run}-gkeml-run")
    return [a["outcome"] for a in json.loads(record_field(found, "attempts.json"))]


def lose_first_attempt(server: Any) -> None:
    """Kueue times run `train`'s attempt 1 out and deactivates it: a loss to recover from."""
    first = server.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    Replayer(server, "ml", "train", 1, "train").play(
        "jobset-podsready-timeout-deactivated", "stuck", pause=0, until=63.0
    )
    deactivate_after_requeue_limit(server, "ml", first)


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_one_damaged_record_stops_no_other_run(two, damage):
    two.store.put(damaged("broken", damage))
    make_client(two).submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.0))
    make_client(two).submit(gang("other", namespace="team-b"))
    backend = make_client(two)._backend  # type: ignore[attr-defined]
    acting = RunController(backend, list(NAMESPACES[1:]), identity="a")
    assert acting.reconcile_once() == {"ml": True, "team-b": True}
    assert set(acting.runs) == {("ml", "train"), ("team-b", "other")}
    why = acting.unreadable["team-b/broken"]
    assert "ConfigMap team-b/broken-gkeml-run" in why and len(why) < 2_000

    # The run in the other namespace is recovered after a loss, the one beside the damaged
    # record is followed to its end: passes go on over the damaged record.
    lose_first_attempt(two)
    Replayer(two, "team-b", "other", 1, "other").play("jobset-succeeded", "train", pause=0)
    for _ in range(3):
        assert acting.reconcile_once() == {"ml": True, "team-b": True}
    two.wait_for(lambda: acting.reconcile_once() and outcomes(two, "ml", "train") == [
        "Failed", ""])  # fmt: skip
    assert two.store.get("jobsets", "ml", "train--r2") is not None
    two.wait_for(lambda: acting.reconcile_once() and outcomes(two, "team-b", "other") == [
        "Succeeded"])  # fmt: skip
    assert "team-b/broken" in acting.unreadable
    # A newer schema is a ConfigError (upgrade gkeml), any other damage a ClusterError.
    with pytest.raises((ClusterError, ConfigError), match="ConfigMap team-b/broken-gkeml-run"):
        team_b(two).get_run("broken")


def test_a_controller_process_outlives_every_damage_and_gkeml_runs_lists_it(two, tmp_path):
    for damage in DAMAGES:
        two.store.put(damaged(damage, damage))
    make_client(two).submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.0))
    make_client(two).submit(gang("other", namespace="team-b"))
    kubeconfig = str(two.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "gkeml_sdk.cli.main", "controller", "run", "-n", "ml",
               "-n", "team-b", "--kubeconfig", kubeconfig, "--interval", "0.1",
               "--identity", "c"]  # fmt: skip
    process = subprocess.Popen(command, env=env, cwd=ROOT, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)  # fmt: skip
    try:
        two.wait_for(lambda: _holder(two) == "c", timeout=60)
        lose_first_attempt(two)
        two.wait_for(lambda: two.store.get("jobsets", "ml", "train--r2") is not None, timeout=60)
        Replayer(two, "ml", "train", 2, "train--r2").play("jobset-succeeded", "train", pause=0)
        two.wait_for(lambda: outcomes(two, "ml", "train") == ["Failed", "Succeeded"], timeout=60)
        assert process.poll() is None, "the controller is still running"
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert "Traceback" not in output

    listed = subprocess.run(
        [sys.executable, "-m", "gkeml_sdk.cli.main", "runs", "-n", "team-b",
         "--kubeconfig", kubeconfig],
        env=env, cwd=ROOT, text=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stdout + listed.stderr
    table, why = [], {}
    for line in listed.stdout.splitlines()[1:]:  # below the header: rows, then the whys
        name, _, rest = line.partition(": ")
        if rest:
            why[name] = rest
        else:
            table.append(line.split())
    assert {row[0]: row[1] for row in table} == {
        "other": "Pending",
        **dict.fromkeys(DAMAGES, "Unreadable"),
    }
    assert sorted(why) == sorted(DAMAGES)
    for damage, said in why.items():
        assert f"run record ConfigMap team-b/{damage}-gkeml-run" in said


def _holder(server: Any) -> str:
    lease = server.store.get("leases", "gkeml-system", "gkeml-run-controller")
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")
