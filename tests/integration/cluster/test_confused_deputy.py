"""The controller creates nothing its requester could not create: it acts for a run record
only in the record's own namespace and only when an attempt object, made by the submitter with
their own rights, carries the digest of the record's spec (issue 34, "Confused deputy")."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gkeml_sdk import RetryPolicy
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from gkeml_sdk.backends.kubernetes.runs.attempts import JOBSETS
from gkeml_sdk.backends.kubernetes.runs.run_record import (
    SPEC_DIGEST_ANNOTATION,
    AttemptRecord,
    RunRecord,
    spec_digest,
)
from gkeml_sdk.errors import ClusterError
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit
from tests.record_fields import record_field, set_record_field

from .conftest import NAMESPACES, make_client
from .replay import Replayer
from .test_scenarios import gang


def controller(server: Any, identity: str = "a") -> RunController:
    backend = make_client(server)._backend  # type: ignore[attr-defined]
    return RunController(backend, list(NAMESPACES[1:]), identity=identity)


def creates(server: Any) -> list[str]:
    """The paths of every successful create but the controller's Leases."""
    return [
        r.path
        for r in server.request_log
        if r.method == "POST" and r.status == 201 and "/leases" not in r.path
    ]


def forged(namespace: str, spec_namespace: str, name: str = "pwn") -> dict[str, Any]:
    """A record as its author, who may only create ConfigMaps in `namespace`, writes it: a
    correct digest (anyone can compute one) and an attempt nobody created yet."""
    job = gang(
        name,
        namespace=spec_namespace,
        service_account="team-b-admin",
        image="attacker/img",
    )
    record = RunRecord(job=job, submitted_at=1.0, attempts=(AttemptRecord(1, name, False),))
    obj = record.sealed().to_configmap()
    obj["metadata"]["namespace"] = namespace
    return obj


def test_a_record_naming_another_namespace_makes_the_controller_create_nothing(two):
    kube = make_client(two)._backend.kube  # type: ignore[attr-defined]
    kube.create(forged("ml", "team-b"))  # the author's one right: ConfigMaps in ml
    acting = controller(two)
    two.clear_request_log()
    assert acting.reconcile_once() == {"ml": True, "team-b": True}
    assert creates(two) == []
    assert two.objects("jobsets") == []
    why = acting.unreadable["ml/pwn"]
    assert "ConfigMap ml/pwn-gkeml-run" in why
    assert "its spec names run 'pwn' in namespace 'team-b'" in why


def test_a_record_in_its_own_namespace_that_nobody_vouched_for_creates_nothing(two, caplog):
    kube = make_client(two)._backend.kube  # type: ignore[attr-defined]
    kube.create(forged("team-b", "team-b"))
    acting = controller(two)
    two.clear_request_log()
    with caplog.at_level("WARNING", logger="gkeml_sdk.backends.kubernetes.controller.vouch"):
        for _ in range(3):
            assert acting.reconcile_once() == {"ml": True, "team-b": True}
    assert creates(two) == []
    told = [r.getMessage() for r in caplog.records if "NotVouchedFor" in r.getMessage()]
    assert len(told) == 1, "a refusal is logged once, not on every pass"
    assert two.objects("jobsets") == []
    why = acting.unreadable["team-b/pwn"]
    assert "act for run record ConfigMap team-b/pwn-gkeml-run: NotVouchedFor" in why
    assert "no JobSet of run 'pwn' in namespace 'team-b' carries its spec digest" in why


def test_a_record_edited_after_it_was_submitted_creates_nothing(two):
    client = make_client(two)
    client.submit(gang(), retry=RetryPolicy(max_resubmits=2, backoff_seconds=0.0))
    stored = two.store.get("configmaps", "ml", "train-gkeml-run")
    edited = copy.deepcopy(stored)
    spec = record_field(edited, "spec.yaml").replace("image: busybox", "image: attacker/img")
    set_record_field(edited, "spec.yaml", spec)
    assert "attacker/img" in record_field(edited, "spec.yaml")
    # ... and a next attempt the controller would create at once (recorded, never created).
    attempts = json.loads(record_field(edited, "attempts.json"))
    attempts[0]["outcome"] = "Failed"
    attempts.append({"attempt": 2, "name": "train--r2", "spot": False})
    set_record_field(edited, "attempts.json", json.dumps(attempts))
    two.store.put(edited)
    acting = controller(two)
    two.clear_request_log()
    acting.reconcile_once()
    assert creates(two) == []
    assert sorted(o["metadata"]["name"] for o in two.objects("jobsets", "ml")) == ["train"]
    why = acting.unreadable["ml/train"]
    assert "ConfigMap ml/train-gkeml-run" in why
    assert "was changed after it was submitted" in why


def test_a_record_without_a_digest_is_refused_with_what_to_do(two):
    make_client(two).submit(gang(), retry=RetryPolicy(max_resubmits=1))
    older = copy.deepcopy(two.store.get("configmaps", "ml", "train-gkeml-run"))
    set_record_field(older, "spec_digest", None)  # as a gkeml from before digests wrote it
    two.store.put(older)
    acting = controller(two)
    acting.reconcile_once()
    assert ("ml", "train") not in acting.runs
    assert "it carries no spec digest" in acting.unreadable["ml/train"]
    assert "resubmit the run with this gkeml" in acting.unreadable["ml/train"]


def test_an_honest_run_is_recovered_and_every_attempt_carries_its_digest(two):
    client = make_client(two)
    client.submit(gang(), retry=RetryPolicy(max_resubmits=2, backoff_seconds=0.0))
    record = client._backend.records.find("train", "ml")  # type: ignore[attr-defined]
    assert record is not None and record.spec_digest == spec_digest(record)
    first = two.store.get("jobsets", "ml", "train")
    assert first["metadata"]["annotations"][SPEC_DIGEST_ANNOTATION] == record.spec_digest
    # The record's stated digest edited alone: the spec is the submitted one, so the run is
    # still acted for, and its next attempt carries the digest of what it runs.
    stated = copy.deepcopy(two.store.get("configmaps", "ml", "train-gkeml-run"))
    set_record_field(stated, "spec_digest", "sha256:" + "0" * 64)
    two.store.put(stated)
    acting = controller(two)
    assert acting.reconcile_once() == {"ml": True, "team-b": True}
    assert acting.unreadable == {}
    Replayer(two, "ml", "train", 1, "train").play(
        "jobset-podsready-timeout-deactivated", "stuck", pause=0, until=63.0
    )
    deactivate_after_requeue_limit(two, "ml", first["metadata"]["uid"])
    two.wait_for(lambda: _recovered(acting, two), timeout=30)
    second = two.store.get("jobsets", "ml", "train--r2")
    assert second["metadata"]["annotations"][SPEC_DIGEST_ANNOTATION] == record.spec_digest
    # A controller that starts now (nothing remembered) vouches for the run from attempt 2.
    fresh = controller(two, identity="b")
    acting.stop()
    kube = make_client(two)._backend.kube  # type: ignore[attr-defined]
    records, refused = fresh.backend.records.scan("ml")
    assert [r.name for r in fresh.vouchers.admit("ml", records, refused)] == ["train"]
    assert refused == {}
    assert kube.find(JOBSETS, "train--r2", "ml") is not None


def _recovered(acting: RunController, server: Any) -> bool:
    acting.reconcile_once()
    return server.store.get("jobsets", "ml", "train--r2") is not None


def test_a_forged_record_seen_on_the_watch_stream_creates_nothing(two):
    import threading

    acting = RunController(
        make_client(two)._backend,  # type: ignore[attr-defined]
        list(NAMESPACES[1:]),
        identity="a",
        interval=0.05,
        resync=3600.0,  # one full pass at the start: the record below arrives on the stream
    )
    running = threading.Thread(target=acting.run, daemon=True)
    running.start()
    try:
        two.wait_for(lambda: acting.resyncs == 1 and two.open_watches >= 2, timeout=30)
        two.clear_request_log()
        kube = make_client(two)._backend.kube  # type: ignore[attr-defined]
        kube.create(forged("team-b", "team-b"))
        two.wait_for(lambda: "team-b/pwn" in acting.unreadable, timeout=30)
    finally:
        acting.stop()
        running.join(timeout=30)
    assert acting.resyncs == 1
    assert creates(two) == [
        "/api/v1/namespaces/team-b/configmaps"  # the author's own write
    ]
    assert "carries its spec digest" in acting.unreadable["team-b/pwn"]


def test_the_vouch_check_itself_refuses_a_record_of_another_namespace(two):
    # Readers refuse such a record first; the check the controller calls refuses it too, for
    # callers that hold a record from elsewhere, without asking the cluster.
    acting = controller(two)
    record = RunRecord.from_configmap(forged("team-b", "team-b"))
    two.clear_request_log()
    refused: dict[str, Any] = {}
    assert acting.vouchers.admit("ml", [record], refused) == []
    assert "it is in 'ml', and a record is acted on only in its own namespace" in str(
        refused["pwn"]
    )
    with pytest.raises(ClusterError, match="act for run record ConfigMap ml/pwn-gkeml-run"):
        acting.vouchers.check(record, "ml")
    assert two.request_log == []
