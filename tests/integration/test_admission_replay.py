"""Every recorded probe of a real control plane (../shared/fixtures/admission-real) replayed
against the fake API server: same state before, same request, same status code and message
(the whole message where the fake renders it; for a `[<whole list>]: field is immutable` the
text around the list), same defaults and uid/deletion facts on success."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration import admission_cluster as ac
from tests.kubeapi import KubeAPIServer
from tests.kubeapi.rawhttp import send
from tests.shared_dir import SHARED

pytest_plugins = ["tests.kubeapi.fixtures"]

FIXTURES = SHARED / "fixtures" / "admission-real"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json")) if FIXTURES.is_dir() else []
# Fixtures the fake cannot replay, with the reason (asserted below so none is lost silently).
EXCLUDED = {
    "job-nodeselector-conflicts-with-flavor-workload": (
        "records a Workload and its QuotaReserved=False/NoMatchingFlavor condition written by "
        "the Kueue controller; the fake has no controllers"
    ),
}
# Events are written by the JobSet controller; the fake checks the state that causes them.
EVENT_FIXTURES = {
    "jobset-events-after-background-resubmit",
    "jobset-podfailurepolicy-without-restartpolicy-events",
}


def load(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / f"{name}.json").read_text()))


def test_every_fixture_is_replayed_or_excluded_with_a_reason():
    if not NAMES:
        pytest.skip(f"admission recordings not found at {FIXTURES}")
    assert set(EXCLUDED) <= set(NAMES), "an exclusion names a fixture that no longer exists"
    assert len(NAMES) >= 67


def prepare(srv: KubeAPIServer, name: str, fx: dict[str, Any]) -> dict[str, Any]:
    """Build the recorded starting state; returns facts the checks need (e.g. old uid)."""
    setup = fx.get("setup", "")
    ac.queues(srv, default_queue="LocalQueue named 'default'" in setup)
    target = fx["request"]["path"].split("?")[0].rsplit("/", 1)[-1]
    facts: dict[str, Any] = {}
    susp = {"suspend": True}
    if target in ("upd-susp", "upd-susp3", "upd-susp4"):
        ac.ok(send(srv, "POST", ac.JS, ac.jobset(target, **susp)), 201)
    elif target == "upd-susp2":
        policy = {
            "maxRestarts": 1,
            "rules": [{"name": "user_code_failure", "action": "FailJobSet"}],
        }
        ac.ok(send(srv, "POST", ac.JS, ac.jobset(target, failurePolicy=policy, **susp)), 201)
    elif target == "upd-run":
        ac.ok(send(srv, "POST", ac.JS, ac.jobset(target, suspend=False)), 201)
    elif target in ("q-run", "q-pending", "lbl-default", "unsusp"):
        labels = {"kueue.x-k8s.io/queue-name": "lq" if target == "q-run" else "no-such-queue"}
        if target == "q-pending":
            labels["kueue.x-k8s.io/priority-class"] = "adm-facts-low"
        ac.ok(send(srv, "POST", ac.JOBS, ac.job(target, labels)), 201)
        if target == "q-run":
            ac.admit(srv, "jobs", target)
    elif target == "lws-q":
        lws = {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": target, "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {
                "replicas": 1,
                "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": ac.pod_spec()}},
            },
        }
        ac.ok(send(srv, "POST", ac.LWS, lws), 201)
    elif target in ("ssa", "ssa-nosusp", "ssa-defaults"):
        path = f"{ac.JS}/{target}?fieldManager=probe"
        ac.ok(send(srv, "PATCH", path, fx["request"]["body"], ac.APPLY), 201)
        if target != "ssa-defaults":
            ac.admit(srv, "jobsets", target, ac.RUNNING_STATUS)
    elif target in ("resubmit", "race", "bg", "fg-natural") or name in EVENT_FIXTURES:
        facts.update(_deletion_setup(srv, name, target))
    return facts


def _deletion_setup(srv: KubeAPIServer, name: str, target: str) -> dict[str, Any]:
    """§4 states: running JobSets (child Job held or not), deleted in foreground/background."""
    if name == "jobset-podfailurepolicy-without-restartpolicy-events":
        fx = load("jobset-podfailurepolicy-without-restartpolicy")
        ac.ok(send(srv, "POST", ac.JS, fx["request"]["body"]), 201)
        return {}
    if name == "jobset-events-after-background-resubmit":
        target = "bg"
    old = ac.applied_running(srv, target, hold=target in ("resubmit", "bg"))
    facts = {"old_uid": old["metadata"]["uid"]}
    if name in (
        "jobset-apply-same-name-while-terminating-changed-spec",
        "jobset-apply-same-name-while-terminating-same-spec",
        "jobset-get-after-apply-while-terminating",
        "jobset-get-after-terminating-object-gone",
        "jobset-apply-same-name-after-gone",
        "jobset-apply-immediately-after-foreground-delete",
    ):
        ac.delete(srv, f"{ac.JS}/{target}", "Foreground")
    if name in (
        "jobset-get-after-apply-while-terminating",
        "jobset-get-after-terminating-object-gone",
    ):
        same = load("jobset-apply-same-name-while-terminating-same-spec")["request"]
        path = f"{ac.JS}/{target}?fieldManager=probe&force=true"
        ac.ok(send(srv, "PATCH", path, same["body"], ac.APPLY), 200)
    if name in ("jobset-get-after-terminating-object-gone", "jobset-apply-same-name-after-gone"):
        ac.release(srv, f"{target}-worker-0")
        ac.wait_status(srv, f"{ac.JS}/{target}", 404)
    if name in (
        "jobset-apply-same-name-after-background-delete",
        "jobset-events-after-background-resubmit",
    ):
        ac.delete(srv, f"{ac.JS}/{target}", "Background")
    if name == "jobset-events-after-background-resubmit":
        new = load("jobset-apply-same-name-after-background-delete")["request"]["body"]
        ac.ok(send(srv, "PATCH", f"{ac.JS}/bg?fieldManager=probe&force=true", new, ac.APPLY), 201)
    return facts


@pytest.mark.parametrize("name", NAMES)
def test_fixture_replays(name: str, kube_api_factory: Callable[..., KubeAPIServer]):
    if name in EXCLUDED:
        pytest.skip(f"not modelled (listed in EXCLUDED): {EXCLUDED[name]}")
    fx = load(name)
    srv = kube_api_factory(namespaces=(ac.NS,))
    facts = prepare(srv, name, fx)
    if name in EVENT_FIXTURES:
        check_event_cause(srv, name)
        return
    req, real = fx["request"], fx["response"]
    code, body = send(
        srv,
        req["method"],
        req["path"],
        req.get("body"),
        req.get("content_type", "application/json"),
    )
    assert code == real["status"], f"{name}: fake answered {code}: {body}"
    want = real["body"]
    if want.get("kind") == "Status" and want.get("status") == "Failure":
        check_status(want, body)
    else:
        check_success(want, body, facts, "dryRun=All" in req["path"])
    check_after(srv, name, req, facts)


def check_status(want: dict[str, Any], got: dict[str, Any]) -> None:
    msg = want["message"]
    if "Invalid value: [{" in msg:  # the whole replicatedJobs list, in Go struct field order
        head, _, rest = msg.partition("Invalid value: [{")
        assert got["message"].startswith(head + "Invalid value: [{"), got["message"]
        assert got["message"].endswith("}]: " + rest.rpartition("}]: ")[2]), got["message"]
    else:
        assert got["message"] == msg
    assert got.get("reason") == want.get("reason") and got["code"] == want["code"]
    assert ("details" in got) == ("details" in want)
    if "causes" in want.get("details", {}):
        pairs = [(c["reason"], c.get("field")) for c in want["details"]["causes"]]
        assert [(c["reason"], c.get("field")) for c in got["details"]["causes"]] == pairs


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _normal(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ({}, [], None)}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def check_success(
    want: dict[str, Any], got: dict[str, Any], facts: dict[str, Any], dry_run: bool
) -> None:
    if want.get("kind") == "Status":  # Background delete
        assert got["kind"] == "Status" and got["status"] == "Success"
        assert {k: v for k, v in got["details"].items() if k != "uid"} == {
            k: v for k, v in want["details"].items() if k != "uid"
        }
        assert got["details"]["uid"] == facts["old_uid"]
        return
    wm, gm = want["metadata"], got["metadata"]
    for key in ("labels", "finalizers", "deletionGracePeriodSeconds"):
        assert gm.get(key) == wm.get(key), f"metadata.{key}"
    assert bool(gm.get("deletionTimestamp")) == bool(wm.get("deletionTimestamp"))
    assert sorted(gm.get("annotations") or {}) == sorted(wm.get("annotations") or {})
    if "old_uid" in facts:
        same = gm["uid"] == facts["old_uid"]
        assert same == bool(wm.get("deletionTimestamp")), "uid: same object iff still terminating"
    wspec, gspec = want.get("spec") or {}, got.get("spec") or {}
    assert gspec.get("suspend") == wspec.get("suspend")
    if want["kind"] in ("JobSet", "LeaderWorkerSet") and dry_run:
        assert _normal(gspec) == _normal(wspec)  # every webhook and schema default
    if want["kind"] == "Pod":
        assert gspec.get("schedulingGates") == wspec.get("schedulingGates")
    if want.get("status") and want["kind"] == "JobSet" and wm.get("deletionTimestamp"):
        # the old object's status (condition times differ)
        assert got["status"]["replicatedJobsStatus"] == want["status"]["replicatedJobsStatus"]
        reasons = [c["reason"] for c in want["status"]["conditions"]]
        assert [c["reason"] for c in got["status"]["conditions"]] == reasons


def check_after(srv: KubeAPIServer, name: str, req: dict[str, Any], facts: dict[str, Any]) -> None:
    """What the probe observed afterwards, as far as the fake models it."""
    path = req["path"].split("?")[0]
    fx = load(name)
    if name in ("jobset-delete-foreground", "jobset-apply-immediately-after-foreground-delete"):
        assert 0.0 < ac.wait_status(srv, path, 404) < 2.0  # terminating, then gone
    if name == "jobset-delete-foreground-held":
        time.sleep(0.6)  # three times the fake's foreground delay: the held child keeps it
        assert ac.ok(send(srv, "GET", path), 200)["metadata"]["deletionTimestamp"]
    if name == "jobset-delete-background":
        child = ac.ok(send(srv, "GET", f"{ac.JOBS}/bg-worker-0"), 200)
        assert child["metadata"]["deletionTimestamp"]  # the held child is still terminating
    for key in ("observed_spec_suspend_after",):
        if key in fx and req["method"] == "PATCH":
            # no Kueue controller here: the write itself stays as the first observation says
            first = fx[key][0]["spec.suspend"]
            assert ac.ok(send(srv, "GET", path), 200)["spec"]["suspend"] == first


def check_event_cause(srv: KubeAPIServer, name: str) -> None:
    """No JobSet controller writes events here; check the state the recorded events report."""
    if name == "jobset-events-after-background-resubmit":
        old = ac.ok(send(srv, "GET", f"{ac.JOBS}/bg-worker-0"), 200)
        assert old["metadata"]["deletionTimestamp"]  # "object is being deleted: ... exists"
        ac.ok(send(srv, "GET", f"{ac.JS}/bg"), 200)
    else:
        got = ac.ok(send(srv, "GET", f"{ac.JS}/pfp-onfailure"), 200)
        job = got["spec"]["replicatedJobs"][0]["template"]["spec"]
        # only "Never" is supported when podFailurePolicy is specified
        assert job["podFailurePolicy"] and job["template"]["spec"]["restartPolicy"] == "OnFailure"
