"""One slow run delays nothing: the controller works on each run in its own turn of a bounded
pool, a name held by a dying object is looked at again later instead of waited for, and
whatever goes wrong for one run (damaged data included) stays with that run."""

from __future__ import annotations

import json
import threading
from typing import Any

from gkeml_sdk import RetryPolicy
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs.attempts import JOBSETS, SUBMISSION_ANNOTATION
from gkeml_sdk.core.labels import ATTEMPT_LABEL, RUN_ID_LABEL
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit
from tests.record_fields import record_field

from .conftest import make_client
from .replay import Replayer
from .test_scenarios import gang, live_attempts


def current(server: Any, run: str) -> dict[str, Any]:
    found = server.store.get("configmaps", "ml", f"{run}-gkeml-run")
    return dict(json.loads(record_field(found, "attempts.json"))[-1])


def lose_first_attempt(server: Any, run: str) -> None:
    uid = server.store.get("jobsets", "ml", run)["metadata"]["uid"]
    Replayer(server, "ml", run, 1, run).play(
        "jobset-podsready-timeout-deactivated", "stuck", pause=0, until=63.0
    )
    deactivate_after_requeue_limit(server, "ml", uid)


def dying_attempt(server: Any, run: str, attempt: int) -> None:
    """An attempt object of an earlier submission of `run`, held by a finalizer while it is
    deleted (its pods still terminating, say)."""
    obj = gang(run, namespace="ml").compile(attempt=attempt).main
    meta = obj["metadata"]
    meta["labels"] = {**meta["labels"], RUN_ID_LABEL: run, ATTEMPT_LABEL: str(attempt)}
    meta["annotations"] = {SUBMISSION_ANNOTATION: "1.0"}
    meta["finalizers"] = ["example.com/hold"]
    kube = make_client(server)._backend.kube  # type: ignore[attr-defined]
    kube.create(obj)
    kube.delete(JOBSETS, meta["name"], "ml")
    assert server.store.get("jobsets", "ml", meta["name"])["metadata"]["deletionTimestamp"]


def test_a_run_stuck_on_a_dying_name_delays_no_other_run(cluster):
    client = make_client(cluster)
    policy = RetryPolicy(max_resubmits=1, backoff_seconds=0)
    client.submit(gang("stuck"), retry=policy)
    client.submit(gang("other"), retry=policy)
    dying_attempt(cluster, "stuck", 2)
    controller = RunController(
        make_client(cluster, deletion_timeout=3600)._backend,  # type: ignore[attr-defined]
        ["ml"],
        identity="a",
    )
    assert controller.reconcile_once() == {"ml": True}
    lose_first_attempt(cluster, "stuck")
    lose_first_attempt(cluster, "other")

    passing = threading.Thread(target=controller.reconcile_once, daemon=True)
    passing.start()
    passing.join(timeout=120)  # one pass; a wait for the dying name would take an hour
    assert not passing.is_alive()
    assert current(cluster, "other")["name"] == "other--r2" and current(cluster, "other")["uid"]
    assert "other--r2" in live_attempts(cluster)
    stuck = current(cluster, "stuck")
    assert stuck["name"] == "stuck--r2" and stuck["uid"] == ""  # reserved, not created yet
    assert cluster.store.get("jobsets", "ml", "stuck--r2")["metadata"]["deletionTimestamp"]

    # The finalizer goes: the next look at the run creates its attempt.
    dying = cluster.store.get("jobsets", "ml", "stuck--r2")
    dying["metadata"]["finalizers"] = []
    cluster.store.put(dying)
    cluster.wait_for(lambda: cluster.store.get("jobsets", "ml", "stuck--r2") is None)
    assert controller.reconcile_once() == {"ml": True}
    assert current(cluster, "stuck")["uid"]
    assert sorted(live_attempts(cluster)) == ["other--r2", "stuck--r2"]


def test_a_run_that_breaks_the_controller_is_refused_alone(cluster, monkeypatch):
    client = make_client(cluster)
    policy = RetryPolicy(max_resubmits=1, backoff_seconds=0)
    client.submit(gang("broken"), retry=policy)
    client.submit(gang("other"), retry=policy)
    controller = RunController(make_client(cluster)._backend, ["ml"], identity="a")  # type: ignore[attr-defined]
    assert controller.reconcile_once() == {"ml": True}
    lose_first_attempt(cluster, "broken")
    lose_first_attempt(cluster, "other")
    from gkeml_sdk.backends.kubernetes.runs import lifecycle

    real = lifecycle.spot_losses

    def damaged(record: Any) -> int:
        if record.name == "broken":  # what a value of the wrong type in its record does
            raise TypeError("'<' not supported between instances of 'str' and 'int'")
        return real(record)

    monkeypatch.setattr(lifecycle, "spot_losses", damaged)
    assert controller.reconcile_once() == {"ml": True}  # the process goes on
    assert current(cluster, "other")["name"] == "other--r2" and current(cluster, "other")["uid"]
    assert "ml/broken" in controller.refused and "TypeError" in controller.refused["ml/broken"]
    assert ("ml", "broken") not in controller.runs
    writes = cluster.count(method="PUT", path_re="/configmaps/broken-gkeml-run")
    assert controller.reconcile_once() == {"ml": True}
    assert "ml/broken" in controller.refused  # its record unchanged: still refused, untouched
    assert cluster.count(method="PUT", path_re="/configmaps/broken-gkeml-run") == writes
