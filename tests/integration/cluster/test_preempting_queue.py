"""A job on a queue whose ClusterQueues let Kueue preempt it is as losable as a Spot job: its
checkpoints in an emptyDir are refused at submit, naming the ClusterQueue and the policy,
before anything is created. A queue that cannot preempt it takes the job; one whose
ClusterQueues the user may not read takes it with a warning saying why it may lose them."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from gkeml_sdk import Client, KubernetesSettings, SpecError, TrainingJob

from .conftest import FAST_RETRY, make_client


def job(**kw: Any) -> TrainingJob:
    # Keeps state (not stateless) and names no checkpoint_dir: an emptyDir in the pod.
    return TrainingJob(name="ft", image="busybox", command=["true"], queue="team-a", **kw)


def cluster_queue(name: str, cohort: str = "", **preemption: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"resourceGroups": [], "preemption": preemption}
    if cohort:
        spec["cohortName"] = cohort
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }


def cohort(name: str, parent: str = "") -> dict[str, Any]:
    spec = {"parentName": parent} if parent else {}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name},
            "spec": spec}  # fmt: skip


def created(server: Any) -> int:
    return server.count(method="POST") + server.count(method="PATCH")


def refused(server: Any, client: Client) -> str:
    before = created(server)
    with pytest.raises(SpecError) as err:
        client.submit(job())
    assert created(server) == before, "nothing is created"
    return str(err.value)


def test_a_queue_that_preempts_within_refuses_empty_dir_checkpoints(cluster: Any) -> None:
    cluster.store.put(cluster_queue("acc-cq", withinClusterQueue="LowerPriority"))
    client = make_client(cluster)
    text = refused(cluster, client)
    assert "job 'ft' can lose its pods (ClusterQueue 'acc-cq' preempts for higher-priority " in text
    assert "(withinClusterQueue=LowerPriority)) but keeps its checkpoints in an emptyDir" in text
    assert "checkpoint_dir='gs://BUCKET/PATH'" in text and "stateless=True" in text
    # Durable checkpoints (or none) are safe on the same queue.
    assert client.submit(job(checkpoint_dir="gs://bucket/ft")).name == "ft"


def test_a_cohort_tree_that_reclaims_refuses_them_and_another_tree_does_not(cluster: Any) -> None:
    cluster.store.put(cluster_queue("acc-cq", cohort="team"))  # preempts nobody itself
    cluster.store.put(cohort("team", parent="org"))
    cluster.store.put(cohort("research", parent="org"))
    cluster.store.put(cluster_queue("elsewhere", cohort="solo", reclaimWithinCohort="Any"))
    client = make_client(cluster)
    assert client.submit(job()).name == "ft"  # nothing in its tree preempts
    cluster.store.put(
        cluster_queue("lender", cohort="research", borrowWithinCohort={"policy": "LowerPriority"})
    )
    text = refused(cluster, make_client(cluster))  # a new client: its checks are not cached
    assert "ClusterQueue 'lender' of cohort 'research' preempts while it borrows " in text
    assert "(borrowWithinCohort.policy=LowerPriority)" in text and "'elsewhere'" not in text


def test_a_queue_the_user_may_not_read_takes_the_job_and_says_why_it_may_lose_them(
    cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    cluster.store.put(cluster_queue("acc-cq", withinClusterQueue="LowerPriority"))
    everything_in_ml = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    namespaces = {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}
    subject = {"kind": "ServiceAccount", "name": "user", "namespace": "ml"}
    for kind, rules, ns in (
        ("Role", [everything_in_ml], "ml"),
        ("ClusterRole", [namespaces], None),
    ):
        meta = {"name": "user", **({"namespace": ns} if ns else {})}
        cluster.store.put({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                           "metadata": meta, "rules": rules})  # fmt: skip
        binding = "RoleBinding" if ns else "ClusterRoleBinding"
        cluster.store.put({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": binding,
                           "metadata": meta,
                           "subjects": [subject],
                           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind,
                                       "name": "user"}})  # fmt: skip
    cluster.rbac.add_token("user-token", "ml", "user")
    api = cluster.api_client()
    api.set_default_header("Authorization", "Bearer user-token")
    settings = KubernetesSettings(api_client=api, namespace="ml", api_retry=FAST_RETRY)
    with caplog.at_level(logging.WARNING, logger="gkeml_sdk.backends.kubernetes.setup.preflight"):
        assert Client(kubernetes=settings).submit(job()).name == "ft"
    (warning,) = [r.getMessage() for r in caplog.records]
    assert (
        "job 'ft' keeps its checkpoints in an emptyDir, and whether queue 'team-a' lets" in warning
    )
    assert "403 Forbidden" in warning and "clusterqueues" in warning
    assert "checkpoint_dir='gs://BUCKET/PATH'" in warning
