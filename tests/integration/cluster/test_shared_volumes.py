"""Data volumes' objects (StorageClass, PersistentVolume, GCPDataSource, claim) on a cluster:
created when missing before the run's own objects, shared by runs and services, and left in
place by cancel, resubmission and a service's delete."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import (
    Accelerator,
    HyperdiskML,
    Parallelstore,
    Pvc,
    RetryPolicy,
    RunState,
    ServeModel,
    TrainingJob,
)
from gkeml_sdk.backends.kubernetes.runs.attempts import Attempts
from gkeml_sdk.backends.kubernetes.runs.run_record import AttemptRecord, RunRecord
from gkeml_sdk.errors import ClusterError
from tests.gke_crds import GCP_DATA_SOURCE

from .replay import Replayer
from .test_scenarios import WATCHERS, creates, jobsets

CRD = GCP_DATA_SOURCE
WEIGHTS = HyperdiskML(bucket="llm-weights", path="llama", size="300Gi")
SCRATCH = Parallelstore(
    "scratch", location="us-central1-a", project="p", access_points=["10.0.0.2"], mount="/scratch"
)
# (plural, namespace, name) of every object the volumes above compile to.
SHARED = [
    ("storageclasses", None, "gkeml-hyperdisk-ml-2400mi"),
    ("persistentvolumes", None, "ml-scratch"),
    ("gcpdatasources", "ml", "llm-weights-llama"),
    ("persistentvolumeclaims", "ml", "llm-weights-llama"),
    ("persistentvolumeclaims", "ml", "scratch"),
]


@pytest.fixture
def gke(cluster: Any) -> Any:
    """The cluster with GKE Volume Populator's CRD, as GKE installs it."""
    cluster.install_crd(CRD)
    return cluster


def job(name: str = "train", **kw: Any) -> TrainingJob:
    volumes = [WEIGHTS, SCRATCH, Pvc("datasets", mount="/data")]
    return TrainingJob(name=name, image="busybox", command=["true"], queue="team-a",
                       accelerator=Accelerator("h100", count=8), nodes=2,
                       service_account="loader", volumes=volumes, stateless=True,
                       **kw)  # fmt: skip


def uids(server: Any) -> dict[tuple[str, str | None, str], str]:
    found = {}
    for plural, ns, name in SHARED:
        obj = server.store.get(plural, ns, name)
        assert obj is not None, f"{plural} {name} is gone"
        found[(plural, ns, name)] = obj["metadata"]["uid"]
    return found


def added_order(server: Any) -> list[str]:
    events, _ = server.store.events_after(0)
    return [
        f"{e.obj['kind']}/{e.obj['metadata']['name']}"
        for e in events
        if e.type == "ADDED" and e.obj["kind"] not in ("Namespace", "LocalQueue", "ConfigMap")
        and e.obj["kind"] not in ("WorkloadPriorityClass", "CustomResourceDefinition")
    ]  # fmt: skip


def test_submit_creates_the_volume_objects_first_and_unowned(gke, client):
    client.submit(job())
    assert added_order(gke) == [
        "StorageClass/gkeml-hyperdisk-ml-2400mi",
        "PersistentVolume/ml-scratch",
        "GCPDataSource/llm-weights-llama",
        "PersistentVolumeClaim/llm-weights-llama",
        "PersistentVolumeClaim/scratch",
        "JobSet/train",
    ]
    for plural, ns, name in SHARED:
        meta = gke.store.get(plural, ns, name)["metadata"]
        assert "ownerReferences" not in meta
        assert "gkeml.dev/run-id" not in meta["labels"]
        assert meta["labels"]["gkeml.dev/shared"] == "true"
    claim = gke.store.get("persistentvolumeclaims", "ml", "llm-weights-llama")
    assert claim["spec"]["dataSourceRef"]["kind"] == "GCPDataSource"
    assert "namespace" not in gke.store.get("persistentvolumes", None, "ml-scratch")["metadata"]


def test_cancel_leaves_the_volume_objects(gke, client):
    run = client.submit(job())
    before = uids(gke)
    run.cancel()
    gke.wait_for(lambda: jobsets(gke) == [])
    assert run.wait(timeout=5).state is RunState.CANCELLED
    assert uids(gke) == before


def test_resubmission_after_deactivation_reuses_the_volume_objects(gke, client):
    policy = RetryPolicy(max_resubmits=2, backoff_seconds=0.05)
    run = client.submit(job(), retry=policy)
    before = uids(gke)
    thread = Replayer(gke, "ml", "train", 1, "train").play_in_background(
        "jobset-podsready-timeout-deactivated", "stuck", watchers=WATCHERS
    )
    second = Replayer(gke, "ml", "train", 2, "train--r2")

    def on_status(status: Any) -> None:
        if status.reason == "Resubmitted":
            second.play_in_background("jobset-succeeded", "train", watchers=0)

    final = run.wait(timeout=30, progress=on_status)
    thread.join()
    assert final.state is RunState.SUCCEEDED and run.attempt == 2
    assert creates(gke, "jobsets") == ["train", "train--r2"]
    assert uids(gke) == before
    assert creates(gke, "persistentvolumeclaims") == ["llm-weights-llama", "scratch"]
    # Attempt 2 asked to create them and was told they exist: nothing was written over them.
    writes = gke.count(method="PATCH", path_re="persistentvolumeclaims|storageclasses")
    assert writes == 0


def test_a_second_job_reads_the_same_claim(gke, client):
    client.submit(job("first"))
    before = uids(gke)
    second = client.submit(job("second"))
    assert second.name == "second" and sorted(jobsets(gke)) == ["first", "second"]
    assert uids(gke) == before
    path = "/api/v1/namespaces/ml/persistentvolumeclaims"
    assert gke.count(method="POST", path_re=path, status=409) == 2


def test_an_existing_claim_with_another_spec_is_a_clear_error(gke, client):
    gke.store.put(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "llm-weights-llama", "namespace": "ml"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "standard",
                "resources": {"requests": {"storage": "300Gi"}},
            },
        }
    )
    with pytest.raises(ClusterError) as caught:
        client.submit(job())
    text = str(caught.value)
    assert "a PersistentVolumeClaim named 'llm-weights-llama' already exists with another" in text
    assert "spec.accessModes: ['ReadWriteOnce'] on the cluster, ['ReadOnlyMany'] compiled" in text
    assert "spec.storageClassName: 'standard' on the cluster" in text
    assert "kubectl delete persistentvolumeclaim llm-weights-llama -n ml" in text
    assert jobsets(gke) == []
    claim = gke.store.get("persistentvolumeclaims", "ml", "llm-weights-llama")
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]


def test_deleting_a_service_leaves_its_weights(gke, client):
    svc = ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct", accelerator=Accelerator("l4"),
                     service_account="loader", weights=WEIGHTS)  # fmt: skip
    handle = client.serve(svc)
    before = uids_of(gke)
    other = client.serve(svc.with_changes(name="chat-b"))  # another service, the same weights
    handle.delete()
    other.delete()
    gke.wait_for(lambda: gke.objects("deployments", "ml") == [])
    assert uids_of(gke) == before


def uids_of(server: Any) -> dict[str, str]:
    """Uids of the weights' objects (the service mounts no Parallelstore)."""
    shared = [s for s in SHARED if "scratch" not in s[2]]
    return {f"{p}/{n}": server.store.get(p, ns, n)["metadata"]["uid"] for p, ns, n in shared}


def test_a_later_attempt_creates_no_volume_and_names_a_missing_claim(gke, client):
    """Attempt 2 is the controller's, which may not create volumes: it checks the claims."""
    client.submit(job())
    gke.store.delete("persistentvolumeclaims", "ml", "scratch")
    before = len(gke.request_log)
    first = AttemptRecord(1, "train", False, outcome="Failed")
    record = RunRecord(job=job(namespace="ml"), submitted_at=1.0, attempts=(first,))
    kube = client._backend.kube  # type: ignore[attr-defined]
    with pytest.raises(ClusterError) as refused:
        Attempts(kube).create(record, AttemptRecord(2, "train--r2", False))
    assert "the shared volume claim ml/scratch is gone" in str(refused.value)
    assert "submit the run again" in str(refused.value)
    sent = [r.method for r in list(gke.request_log)[before:]]
    assert "GET" in sent and not {"POST", "PUT", "PATCH"} & set(sent)  # created nothing
