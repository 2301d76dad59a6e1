"""The run controller recovers a run with nobody following it, one controller acts at a
time, every write is fenced by its Lease, and any number of readers see one history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import RetryPolicy, RunState
from gkeml_sdk.backends.kubernetes.api.lease import LeaseLost
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs.lifecycle import RunLifecycle
from gkeml_sdk.backends.kubernetes.runs.liveness import LEASE_NAME, ControllerWatch
from gkeml_sdk.cli.main import main
from gkeml_sdk.runs.handle import FailureCause
from tests.integration.cluster.conftest import track_of
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit
from tests.record_fields import record_field

from .conftest import make_client
from .replay import Replayer
from .test_controller_fencing import Clock
from .test_scenarios import gang, jobsets, live_attempts

ROOT = Path(__file__).resolve().parents[3]


def record_attempts(server: Any, run: str = "train") -> list[dict[str, Any]]:
    found = server.store.get("configmaps", "ml", f"{run}-gkeml-run")
    return json.loads(record_field(found, "attempts.json")) if found else []


def wait_until(what: str, check: Any, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, f"timed out waiting until {what}"
        time.sleep(0.05)


def lease_holder(server: Any, namespace: str = "gkeml-system") -> str:
    lease = server.store.get("leases", namespace, LEASE_NAME)
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


def start_controller(server: Any, tmp_path: Path, identity: str) -> subprocess.Popen[str]:
    kubeconfig = server.kubeconfig(tmp_path / f"kubeconfig-{identity}", namespace="ml")
    command = [sys.executable, "-m", "gkeml_sdk.cli.main", "controller", "run",
               "--namespace", "ml", "--kubeconfig", str(kubeconfig), "--interval", "0.1",
               "--identity", identity, "--controller-namespace", "ops"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(command, env=env, cwd=ROOT, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)  # fmt: skip


def test_a_controller_process_recovers_a_run_nobody_follows(cluster, tmp_path, capsys):
    submitter = make_client(cluster)
    submitter.submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.05))
    del submitter  # the notebook closed: nobody follows the run
    first_uid = cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    cluster.create_namespace("ops")  # the controller's own namespace, named by its flag
    controller = start_controller(cluster, tmp_path, "controller-a")
    try:
        wait_until("the controller leads", lambda: lease_holder(cluster, "ops") == "controller-a")
        # Kueue admits it, times it out once (PodsReady), requeues and re-admits it ...
        Replayer(cluster, "ml", "train", 1, "train").play(
            "jobset-podsready-timeout-deactivated", "stuck", pause=0.005, until=63.0
        )
        # ... then deactivates it: its requeue limit is reached.
        deactivate_after_requeue_limit(cluster, "ml", first_uid)
        wait_until("attempt 2 exists", lambda: "train--r2" in jobsets(cluster))
        Replayer(cluster, "ml", "train", 2, "train--r2").play("jobset-succeeded", "train", pause=0)
        wait_until(
            "the record says attempt 2 succeeded",
            lambda: [a["outcome"] for a in record_attempts(cluster)] == ["Failed", "Succeeded"],
        )
    finally:
        controller.terminate()
        output, _ = controller.communicate(timeout=30)
    assert controller.returncode == 0, output
    assert "run controller controller-a: namespaces ml" in output

    readers = [make_client(cluster).get_run("train") for _ in range(3)]
    assert {r.state.state for r in readers} == {RunState.SUCCEEDED}
    histories = [r.history for r in readers]
    assert histories[0] == histories[1] == histories[2]
    counters = [r.counters for r in readers]
    assert counters[0] == counters[1] == counters[2]
    assert counters[0].resubmissions == 1 and counters[0].preemptions == 0
    assert counters[0].extra["evictions.PodsReadyTimeout"] == 1
    assert jobsets(cluster) == ["train", "train--r2"]  # the finished one kept
    assert live_attempts(cluster) == []  # both ended: attempt 2 succeeded
    history = histories[0]
    keys = [t.key for t in history]
    assert len(keys) == len(set(keys)), "every entry records something else"
    lost = next(t for t in history if t.status.state is RunState.FAILED)
    assert lost.attempt == 1 and lost.status.cause is FailureCause.DEACTIVATED
    assert lost.status.reason == "DeactivatedDueToRequeuingLimitExceeded"
    resubmitted = [t for t in history if t.status.reason == "Resubmitted"]
    assert [t.attempt for t in resubmitted] == [2]
    assert history[-1].status.state is RunState.SUCCEEDED and history[-1].attempt == 2

    # Consecutive `gkeml status` calls print the same lines and write nothing.
    kubeconfig = str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    writes = cluster.count(method="PATCH") + cluster.count(method="POST")
    printed = []
    for _ in range(3):
        assert main(["status", "train", "--kubeconfig", kubeconfig]) == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] == printed[2]
    assert len(printed[0].splitlines()) == len(history) + 1
    assert cluster.count(method="PATCH") + cluster.count(method="POST") == writes


def test_two_controllers_at_once_one_acts(cluster):
    client = make_client(cluster)
    client.submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.0))
    a = RunController(client._backend, ["ml"], identity="a")  # type: ignore[attr-defined]
    b = RunController(make_client(cluster)._backend, ["ml"], identity="b")  # type: ignore[attr-defined]
    assert a.reconcile_once() == {"ml": True}
    assert b.reconcile_once() == {"ml": False}
    assert ("ml", "train") in a.runs and not b.runs
    uid = cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    Replayer(cluster, "ml", "train", 1, "train").play(
        "jobset-podsready-timeout-deactivated", "stuck", pause=0, until=63.0
    )
    deactivate_after_requeue_limit(cluster, "ml", uid)
    for _ in range(3):
        b.reconcile_once()
        a.reconcile_once()
    cluster.wait_for(lambda: live_attempts(cluster) == ["train--r2"])
    creates = [r for r in cluster.request_log if r.method == "POST" and "jobsets" in r.path]
    assert len([r for r in creates if r.status == 201]) == 2  # attempt 1 by submit, 2 by a
    assert ControllerWatch(client._backend.kube).acts_for("ml")  # type: ignore[attr-defined]
    assert not ControllerWatch(client._backend.kube).acts_for("other")  # type: ignore[attr-defined]


def test_a_write_is_refused_once_the_renew_deadline_passed(cluster):
    client = make_client(cluster)
    run = client.submit(gang())
    backend = client._backend  # type: ignore[attr-defined]
    clock = Clock()
    controller = RunController(backend, ["ml"], identity="a", clock=clock)
    assert controller.reconcile_once() == {"ml": True}
    clock.now += 11  # no renewal for longer than the 10 s deadline: it may not write
    track = track_of(run)
    track.lifecycle = RunLifecycle(backend.service, track)
    Replayer(cluster, "ml", "train", 1, "train").play("jobset-succeeded", "train", pause=0)
    before = cluster.count(method="PUT")
    with pytest.raises(LeaseLost):
        backend.service.read(track)  # the run succeeded: its record would be written
    assert cluster.count(method="PUT") == before


def test_a_follower_defers_to_a_live_controller(cluster):
    client = make_client(cluster)
    run = client.submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.0))
    controller = RunController(make_client(cluster)._backend, ["ml"], identity="a")  # type: ignore[attr-defined]
    assert controller.reconcile_once() == {"ml": True}
    client._backend.service.take_part(track_of(run))  # type: ignore[attr-defined]
    assert track_of(run).lifecycle is None  # the controller acts, this client only reads


def test_a_follower_and_a_controller_resubmit_once(cluster):
    import threading

    client = make_client(cluster)
    run = client.submit(gang(), retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.05))
    controller = RunController(make_client(cluster)._backend, ["ml"], identity="a", interval=0.05)  # type: ignore[attr-defined]
    assert controller.reconcile_once() == {"ml": True}
    acting = threading.Thread(target=controller.run, daemon=True)
    acting.start()
    uid = cluster.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    second = Replayer(cluster, "ml", "train", 2, "train--r2")

    def kueue() -> None:
        Replayer(cluster, "ml", "train", 1, "train").play(
            "jobset-podsready-timeout-deactivated", "stuck", pause=0.005, until=63.0
        )
        deactivate_after_requeue_limit(cluster, "ml", uid)
        wait_until("attempt 2 exists", lambda: "train--r2" in jobsets(cluster))
        second.play("jobset-succeeded", "train", pause=0.005)

    played = threading.Thread(target=kueue, daemon=True)
    played.start()
    try:
        final = run.wait(timeout=60)
    finally:
        controller.stop()
        acting.join(timeout=30)
    played.join(timeout=30)
    assert final.state is RunState.SUCCEEDED and run.attempt == 2
    assert track_of(run).lifecycle is None  # it only followed
    creates = [r for r in cluster.request_log if r.method == "POST" and "jobsets" in r.path]
    assert len([r for r in creates if r.status == 201]) == 2
    assert [t.attempt for t in run.history if t.status.reason == "Resubmitted"] == [2]
