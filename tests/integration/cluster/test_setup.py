"""`ClusterSetup` against the test API server: plan is read-only and diffs against what is
there, apply creates from an empty cluster with server-side apply, and preflight sends the
user to `gkeml setup` when a queued-provisioning queue is missing or incomplete."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import (
    Accelerator,
    Capacity,
    ClusterSetup,
    ConfigError,
    Team,
    TopologyPlacement,
    TrainingJob,
)

from .conftest import make_client


@pytest.fixture(autouse=True)
def kube_system(kube_api: Any) -> None:
    """Setups install node DaemonSets in kube-system, which every real cluster has."""
    kube_api.store.put(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
    )


def platform(quota: int = 16) -> ClusterSetup:
    return ClusterSetup(
        capacity=[Capacity(accelerator=Accelerator("h100", count=8), topology=True,
                           provisioning=["standard", "spot", "queued"])],
        teams=[Team(name="team-a", namespaces=["ml"], quota={"h100": quota})],
        priorities={"low": 100, "high": 1000},
    )  # fmt: skip


def writes(server: Any) -> list[Any]:
    return [r for r in server.request_log if r.method in ("POST", "PATCH", "PUT", "DELETE")]


def test_plan_is_read_only_then_apply_creates_then_nothing_to_do(kube_api: Any) -> None:
    client = make_client(kube_api)
    plan = client.plan_setup(platform())
    assert [c.title for c in plan.changes if c.action == "unchanged"] == ["Namespace ml"]
    assert writes(kube_api) == []
    assert "+ create ResourceFlavor h100-queued" in str(plan)
    applied = client.apply_setup(platform())
    assert len(applied.pending) == len(plan.pending) == len(plan.changes) - 1
    flavor = kube_api.store.get("resourceflavors", None, "h100-queued")
    assert flavor["spec"]["nodeLabels"]["cloud.google.com/gke-queued"] == "true"
    local = kube_api.store.get("localqueues", "ml", "team-a-queued")
    assert local["spec"]["clusterQueue"] == "team-a-queued"
    patches = [r for r in writes(kube_api) if r.method == "PATCH"]
    assert len(patches) == len(plan.pending)
    again = client.plan_setup(platform())
    assert {c.action for c in again.changes} == {"unchanged"}
    before = len(writes(kube_api))
    client.apply_setup(platform())
    assert len(writes(kube_api)) == before  # nothing to change, nothing written


def test_a_quota_change_is_planned_as_a_diff_and_applied(kube_api: Any) -> None:
    client = make_client(kube_api)
    client.apply_setup(platform())
    plan = client.plan_setup(platform(quota=24))
    updates = [c for c in plan.changes if c.action == "update"]
    assert [c.title for c in updates] == [
        "ClusterQueue team-a",
        "ClusterQueue team-a-spot",
        "ClusterQueue team-a-queued",
    ]
    assert "-        nominalQuota: '16'" in updates[0].diff
    assert "+        nominalQuota: '24'" in updates[0].diff
    client.apply_setup(platform(quota=24))
    queue = kube_api.store.get("clusterqueues", None, "team-a-queued")
    gpus = queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][-1]
    assert gpus["nominalQuota"] == "24"


def test_a_queued_job_on_the_set_up_queue_passes_preflight(kube_api: Any) -> None:
    client = make_client(kube_api)
    client.apply_setup(platform())
    job = TrainingJob(name="ft", image="img", command=["x"], nodes=2, queue="team-a-queued",
                      accelerator=Accelerator("h100", count=8), provisioning="queued",
                      placement=TopologyPlacement("subblock"), stateless=True)  # fmt: skip
    run = client.submit(job)
    created = kube_api.store.get("jobsets", "ml", "ft")
    assert created is not None and run.attempt == 1


def job(queue: str, **kw: Any) -> TrainingJob:
    return TrainingJob(name="ft", image="img", command=["x"], nodes=2, queue=queue,
                       accelerator=Accelerator("h100", count=8), stateless=True, **kw)  # fmt: skip


def test_preflight_suggests_the_setup_for_a_missing_queue(kube_api: Any) -> None:
    client = make_client(kube_api)
    with pytest.raises(ConfigError) as err:
        client.submit(job("team-a", provisioning="queued"))
    text = str(err.value)
    assert "LocalQueue 'team-a' does not exist" in text
    assert "gkeml setup plan setup.yaml`, then `gkeml setup apply setup.yaml`" in text
    assert "and submit with queue='team-a-queued'" in text
    # The suggested file, applied, is what the job needs.
    yaml_text = text.split("with setup.yaml:\n")[1].split("and submit")[0]
    client.apply_setup(ClusterSetup.from_yaml(yaml_text))
    client.submit(job("team-a-queued", provisioning="queued"))
    assert kube_api.store.get("jobsets", "ml", "ft") is not None


def test_preflight_refuses_a_queue_without_the_provisioning_check(kube_api: Any) -> None:
    client = make_client(kube_api)
    standard = platform()
    client.apply_setup(standard)
    with pytest.raises(ConfigError, match=r"ClusterQueue 'team-a' has no ProvisioningRequest"):
        client.submit(job("team-a", provisioning="queued"))
    kube_api.store.delete("resourceflavors", None, "h100-queued")
    with pytest.raises(ConfigError, match=r"ResourceFlavor 'h100-queued' .* is missing"):
        client.submit(job("team-a-queued", provisioning="queued"))
    assert kube_api.objects("jobsets", "ml") == []


def test_the_local_backend_has_no_cluster_to_set_up(tmp_path: Any) -> None:
    from gkeml_sdk import Client, LocalSettings

    with pytest.raises(ConfigError, match="local backend has none"):
        Client(local=LocalSettings(run_dir=str(tmp_path))).plan_setup(platform())


SETUP_YAML = """\
kind: ClusterSetup
capacity:
- accelerator: {model: h100, count: 8}
  provisioning: [standard, queued]
teams:
- {name: team-a, namespaces: [ml], quota: {h100: 16}}
"""


def test_cli_plans_then_applies_a_setup_file(kube_api: Any, tmp_path: Any, capsys: Any) -> None:
    import yaml

    from gkeml_sdk.cli.main import main

    kubeconfig = str(kube_api.kubeconfig(tmp_path / "kubeconfig", namespace="ml"))
    path = tmp_path / "setup.yaml"
    path.write_text(SETUP_YAML)
    assert main(["setup", "plan", str(path), "--kubeconfig", kubeconfig]) == 0
    out = capsys.readouterr().out
    objects, _, plan = out.partition("---\n# plan against the cluster")
    kinds = [d["kind"] for d in yaml.safe_load_all(objects) if d]
    assert "AdmissionCheck" in kinds and "ClusterQueue" in kinds
    assert "+ create LocalQueue team-a-queued (namespace ml)" in plan
    assert writes(kube_api) == []
    assert main(["setup", "apply", str(path), "--kubeconfig", kubeconfig]) == 0
    # 8 queue objects, the default low, normal and high WorkloadPriorityClasses and the
    # A3 High's GPUDirect-TCPX NCCL plugin installer and GKE's NRI device injector.
    assert "applied 13 object(s)" in capsys.readouterr().out
    assert kube_api.store.get("daemonsets", "kube-system", "nccl-tcpx-installer") is not None
    assert kube_api.store.get("daemonsets", "kube-system", "device-injector") is not None
    assert kube_api.store.get("admissionchecks", None, "gkeml-queued-provisioning")
    assert main(["setup", "plan", str(path), "--kubeconfig", kubeconfig]) == 0
    assert "0 to create, 0 to update" in capsys.readouterr().out
    assert main(["setup", "plan", str(path), "--offline"]) == 0
    assert "plan against the cluster" not in capsys.readouterr().out
    path.write_text(SETUP_YAML.replace("h100: 16", "a100: 16"))
    assert main(["setup", "apply", str(path), "--kubeconfig", kubeconfig]) == 1
    assert "unknown capacity 'a100'" in capsys.readouterr().err


def test_the_setup_example_applies_and_submits_on_the_test_server(
    kube_api: Any, tmp_path: Any
) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    kubeconfig = kube_api.kubeconfig(tmp_path / "kubeconfig", namespace="research")
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "setup_cluster.py"), "--apply"],
        env=env, capture_output=True, text=True, timeout=120, cwd=root, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "+ create ClusterQueue research-queued" in done.stdout
    assert "llama-ft: Pending" in done.stdout
    jobset = kube_api.store.get("jobsets", "research", "llama-ft")
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research-queued"
    assert kube_api.store.get("namespaces", None, "prod") is not None


def test_cli_names_a_missing_setup_file_in_one_line(tmp_path: Any, capsys: Any) -> None:
    from gkeml_sdk.cli.main import main

    missing = tmp_path / "setup.yaml"
    assert main(["setup", "plan", str(missing), "--offline"]) != 0
    err = capsys.readouterr().err
    assert f"{missing}: no such file" in err and "Traceback" not in err


def test_preflight_refuses_placement_on_a_queue_without_a_topology(kube_api: Any) -> None:
    client = make_client(kube_api)
    flat = platform().model_copy(
        update={"capacity": [platform().capacity[0].model_copy(update={"topology": False})]}
    )
    client.apply_setup(flat)
    placed = job("team-a", placement=TopologyPlacement("subblock"))
    with pytest.raises(ConfigError, match=r"no flavor with a topology.*topology=True"):
        client.submit(placed)
    assert kube_api.objects("jobsets", "ml") == []
    assert client.submit(job("team-a")).attempt == 1  # without placement it is admitted
