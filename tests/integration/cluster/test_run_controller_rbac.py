"""The run controller recovers runs with exactly the Roles `gkeml controller install` binds
(one in the managed namespace, one for its Lease in its own namespace) on an API server that
enforces RBAC, and each rule is needed: the test API server's authorizer refuses some request
the controller sent once that rule is taken out of its Role (as a SubjectAccessReview would
answer for each request)."""

from __future__ import annotations

from typing import Any

from gkeml_sdk import Client, KubernetesSettings, Parallelstore, RetryPolicy
from gkeml_sdk.backends.kubernetes.controller.install import (
    LEASE_ROLE,
    RUN_ROLE,
    controller_objects,
)
from gkeml_sdk.backends.kubernetes.controller.permissions import (
    RUN_CONTROLLER_LEASE_RULES,
    RUN_CONTROLLER_RULES,
)
from gkeml_sdk.backends.kubernetes.controller.process import RunController
from tests.kubeapi.handler import RequestRecord
from tests.kubeapi.kueue_deactivation import deactivate_after_requeue_limit
from tests.kubeapi.rbac import attributes, service_account

from .conftest import FAST_RETRY, make_client
from .replay import Replayer
from .test_runs_listing import QUEUED, play, serve_queue_positions, single
from .test_scenarios import gang, jobsets

TOKEN = "run-controller-token"
ACCOUNT = ("gkeml-system", "gkeml-controller")
SCRATCH = Parallelstore(
    "scratch", location="us-central1-a", project="p", access_points=["10.0.0.2"], mount="/scratch"
)
# (Role name, its namespace, rule) of every rule the install binds to the controller.
RULES = [(RUN_ROLE, "ml", r) for r in RUN_CONTROLLER_RULES] + [
    (LEASE_ROLE, "gkeml-system", r) for r in RUN_CONTROLLER_LEASE_RULES
]


def as_account(server: Any) -> Client:
    server.create_namespace("gkeml-system")
    for obj in controller_objects(["ml"], image="registry.example/gkeml:1"):
        if obj["kind"] in ("Role", "RoleBinding"):
            server.store.put(obj)
    server.rbac.add_token(TOKEN, *ACCOUNT)
    api = server.api_client()
    api.set_default_header("Authorization", f"Bearer {TOKEN}")
    settings = KubernetesSettings(
        api_client=api, namespace="ml", api_retry=FAST_RETRY, watch_seconds=30
    )
    return Client(kubernetes=settings)


def sent(server: Any) -> list[RequestRecord]:
    log = list(server.request_log)
    return [r for r in log if r.headers.get("authorization") == f"Bearer {TOKEN}"]


def scenario(server: Any) -> list[RequestRecord]:
    """A gang run (JobSet, a shared volume) lost to Kueue and recovered by the controller, a
    single-node run (a batch Job) and a run queued behind another (Kueue's visibility API),
    submitted by a user; the controller as its installed ServiceAccount. The requests the
    controller sent."""
    controller = RunController(
        as_account(server)._backend,  # type: ignore[attr-defined]
        ["ml"],
        identity="sa",
        controller_namespace="gkeml-system",
    )
    user = make_client(server)
    retry = RetryPolicy(max_resubmits=1, backoff_seconds=0.0)
    user.submit(gang(volumes=[SCRATCH]), retry=retry)
    user.submit(single("solo"), retry=retry)
    user.submit(gang("second", nodes=1, gang=True), retry=retry)
    serve_queue_positions(server)
    play(server, "second", QUEUED, "second", until=2.0)  # queued behind another
    assert controller.reconcile_once() == {"ml": True}
    uid = server.store.get("jobsets", "ml", "train")["metadata"]["uid"]
    Replayer(server, "ml", "train", 1, "train").play(
        "jobset-podsready-timeout-deactivated", "stuck", pause=0, until=63.0
    )
    deactivate_after_requeue_limit(server, "ml", uid)
    for _ in range(3):
        controller.reconcile_once()
    server.wait_for(lambda: "train--r2" in jobsets(server))
    return sent(server)


def test_the_controller_needs_each_rule_of_its_roles_and_no_other(cluster: Any) -> None:
    requests = scenario(cluster)
    assert "train--r2" in jobsets(cluster)  # attempt 2, created by the controller
    assert requests and [r for r in requests if r.status == 403] == []
    user = service_account(*ACCOUNT)
    unneeded = []
    for role, namespace, rule in RULES:
        stored = cluster.store.get("roles", namespace, role)
        cluster.store.put({**stored, "rules": [r for r in stored["rules"] if r != rule]})
        try:
            if all(
                cluster.rbac.allowed(user, attributes(r.method, r.path, r.query)) for r in requests
            ):
                unneeded.append(f"{namespace}: {rule}")
        finally:
            cluster.store.put(stored)
    assert unneeded == []
