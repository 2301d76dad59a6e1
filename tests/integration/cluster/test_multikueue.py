"""MultiKueue against the test API server: a manager and two workers set up from one
ClusterSetup, a job compiled with managedBy, dispatched to a worker (status.clusterName, as
Kueue's MultiKueue workload controller writes it), followed from the manager, logs read on the
worker."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import (
    Accelerator,
    Capacity,
    ClusterSetup,
    KubernetesSettings,
    SpecError,
    Team,
    TrainingJob,
    WorkerCluster,
)
from tests.schemas import validate_object

from .conftest import make_client
from .replay import SERVER_FIELDS, Replayer

WORKERS = ["worker-1", "worker-2"]


@pytest.fixture(autouse=True)
def kube_system(kube_api: Any) -> None:
    """Setups install node DaemonSets in kube-system, which every real cluster has."""
    kube_api.store.put(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
    )


def manager_setup() -> ClusterSetup:
    return ClusterSetup(
        capacity=[Capacity(accelerator=Accelerator("h100", count=8),
                           provisioning=["standard", "spot", "queued"])],
        teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": 16})],
        workers=[WorkerCluster(name=w) for w in WORKERS], queues="ordered",
    )  # fmt: skip


def job() -> TrainingJob:
    # Stateless: setup's queue preempts, and `true` keeps nothing to resume from.
    return TrainingJob(name="train", image="busybox", command=["true"], queue="team-a",
                       accelerator=Accelerator("h100", count=8), nodes=2,
                       capacity=["standard", "spot"], multikueue=True,
                       stateless=True)  # fmt: skip


def test_a_manager_and_two_workers_compile_and_validate() -> None:
    manager = manager_setup().compile().objects
    for obj in manager:
        validate_object(obj)
    kinds = [o["kind"] for o in manager]
    assert kinds.count("MultiKueueCluster") == 2 and "ProvisioningRequestConfig" not in kinds
    config = next(o for o in manager if o["kind"] == "MultiKueueConfig")
    assert config["spec"] == {"clusters": WORKERS}
    clusters = [o for o in manager if o["kind"] == "MultiKueueCluster"]
    assert clusters[1]["spec"]["clusterSource"]["kubeConfig"] == {
        "locationType": "Secret",
        "location": "worker-2-kubeconfig",
    }
    (queue,) = (o for o in manager if o["kind"] == "ClusterQueue")
    assert queue["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "gkeml-multikueue"}]
    }
    worker = manager_setup().for_worker().compile().objects
    for obj in worker:
        validate_object(obj)
    assert "MultiKueueCluster" not in {o["kind"] for o in worker}
    (worker_queue,) = (o for o in worker if o["kind"] == "ClusterQueue")
    # The worker provisions: its queue keeps the queued flavor's ProvisioningRequest check.
    assert worker_queue["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] == [
        "h100-queued"
    ]
    main = job().compile().main
    validate_object(main)
    assert main["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"


def test_a_run_reports_its_worker_and_reads_its_logs_there(
    kube_api: Any, kube_api_factory: Any
) -> None:
    cluster = kube_api
    workers = {
        name: kube_api_factory(namespaces=("default", "ml", "kube-system")) for name in WORKERS
    }
    manager = make_client(cluster)
    manager.apply_setup(manager_setup())
    for server in workers.values():
        make_client(server).apply_setup(manager_setup().for_worker())
    assert cluster.store.get("multikueueconfigs", None, "gkeml-multikueue")["spec"]["clusters"] == [
        "worker-1",
        "worker-2",
    ]
    run = manager.submit(job())
    # The manager's Kueue admits the Workload; its JobSet controller leaves the job alone.
    Replayer(cluster, "ml", "train", 1, "train").play(
        "jobset-succeeded", "train", until=2.0, kinds=("Workload",)
    )
    assert run.dispatched_to is None
    (workload,) = cluster.objects("workloads", "ml")
    # Kueue's MultiKueue workload controller (pkg/controller/admissionchecks/multikueue/
    # workload.go) records the worker that reserved quota first in status.clusterName.
    cluster.store.patch("workloads", "ml", workload["metadata"]["name"],
                        {"status": {"clusterName": "worker-2"}}, manager="kueue")  # fmt: skip
    assert run.dispatched_to == "worker-2"
    # MultiKueue creates the job on the worker as it is, without managedBy.
    remote = copy.deepcopy(cluster.store.get("jobsets", "ml", "train"))
    for key in SERVER_FIELDS:
        remote["metadata"].pop(key, None)
    remote.pop("status", None)
    del remote["spec"]["managedBy"]
    worker = workers["worker-2"]
    worker.store.put(remote)
    Replayer(worker, "ml", "train", 1, "train").play("jobset-succeeded", "train", until=2.0)
    pods = sorted(p["metadata"]["name"] for p in worker.objects("pods", "ml"))
    assert pods and cluster.objects("pods", "ml") == []
    for rank, pod in enumerate(pods):
        worker.set_pod_log("ml", pod, f"step {rank}\n")
    settings = KubernetesSettings(api_client=worker.api_client(), namespace="ml")
    lines = sorted(run.worker_logs(settings))
    assert [line.split()[-1] for line in lines] == [str(r) for r in range(len(pods))]


def test_apply_writes_each_workers_kubeconfig_secret_outside_the_plan(kube_api: Any) -> None:
    kube_api.store.put({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": "kueue-system"}})  # fmt: skip
    manager = make_client(kube_api)
    kubeconfigs = {w: f"apiVersion: v1\nkind: Config\n# {w}\n" for w in WORKERS}
    plan = manager.apply_setup(manager_setup(), worker_kubeconfigs=kubeconfigs)
    assert "Secret" not in str(plan)
    secret = kube_api.store.get("secrets", "kueue-system", "worker-2-kubeconfig")
    data = secret.get("stringData") or secret["data"]
    assert "kubeconfig" in data
    with pytest.raises(SpecError, match=r"no worker of the setup.*worker-1, worker-2"):
        manager.apply_setup(manager_setup(), worker_kubeconfigs={"worker-9": "x"})


def test_the_cli_plans_either_side_from_one_file(tmp_path: Path, capsys: Any) -> None:
    from gkeml_sdk.cli.main import main

    spec = tmp_path / "setup.yaml"
    spec.write_text(manager_setup().to_yaml())
    assert main(["setup", "plan", str(spec), "--offline"]) == 0
    manager = capsys.readouterr().out
    assert main(["setup", "plan", str(spec), "--offline", "--side", "worker"]) == 0
    worker = capsys.readouterr().out
    assert "kind: MultiKueueConfig" in manager and "kind: MultiKueueConfig" not in worker
    assert "gkeml-queued-provisioning" in worker and "gkeml-queued-provisioning" not in manager
