"""ClusterSetup: the Kueue objects derived from capacity and team quotas, and its rules."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Accelerator, Capacity, ClusterSetup, SpecError, Team, TpuSlice
from tests.schemas import validate_object


def setup(**kw: Any) -> ClusterSetup:
    fields: dict[str, Any] = {
        "capacity": [
            Capacity(accelerator=Accelerator("h100", count=8), topology=True,
                     provisioning=["standard", "spot", "flex-start", "queued"]),
            Capacity(accelerator=TpuSlice("v6e", "4x4"), provisioning=["standard", "queued"]),
        ],
        "teams": [Team(name="team-a", namespaces=["ml"], quota={"h100": 16, "v6e-4x4": 16},
                       borrowing_limit=8),
                  Team(name="team-b", quota={"h100": 8})],
        "priorities": {"low": 100, "high": 1000},
        **kw,
    }  # fmt: skip
    return ClusterSetup(**fields)


def named(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == kind}


def test_every_object_passes_schemas_and_admission_and_yaml_round_trips() -> None:
    built = setup()
    objects = built.compile().objects
    for obj in objects:
        validate_object(obj)
    assert ClusterSetup.from_yaml(built.to_yaml()) == built
    kinds = [o["kind"] for o in objects]
    # The H100 (A3 High) capacity brings its GPUDirect-TCPX NCCL plugin installer.
    order = ["Namespace", "DaemonSet", "WorkloadPriorityClass", "Topology", "ResourceFlavor"]
    order += ["ProvisioningRequestConfig", "AdmissionCheck", "ClusterQueue", "LocalQueue"]
    assert sorted(set(kinds), key=kinds.index) == order


def test_one_flavor_per_capacity_and_mode_with_node_labels_and_tolerations() -> None:
    flavors = named(setup().compile().objects, "ResourceFlavor")
    assert list(flavors) == ["h100-standard", "h100-spot", "h100-flex-start", "h100-queued",
                             "v6e-4x4-standard", "v6e-4x4-queued"]  # fmt: skip
    queued = flavors["h100-queued"]["spec"]
    assert queued["nodeLabels"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        "cloud.google.com/gke-queued": "true",
    }
    assert [t["key"] for t in queued["tolerations"]] == [
        "nvidia.com/gpu",
        "cloud.google.com/gke-queued",
    ]
    spot = flavors["h100-spot"]["spec"]["nodeLabels"]
    assert spot["cloud.google.com/gke-spot"] == "true"
    assert flavors["h100-flex-start"]["spec"]["nodeLabels"]["cloud.google.com/gke-flex-start"]
    assert flavors["h100-standard"]["spec"]["topologyName"] == "gke-default"
    assert "topologyName" not in flavors["v6e-4x4-queued"]["spec"]
    tpu = flavors["v6e-4x4-queued"]["spec"]["nodeLabels"]
    assert tpu["cloud.google.com/gke-tpu-topology"] == "4x4"


def test_cluster_queues_per_team_and_mode_share_one_cohort() -> None:
    objects = setup().compile().objects
    queues = named(objects, "ClusterQueue")
    modes = ["", "-spot", "-flex-start", "-queued"]
    assert list(queues) == [f"{team}{m}" for team in ("team-a", "team-b") for m in modes]
    assert {q["spec"]["cohortName"] for q in queues.values()} == {"gkeml"}
    queued = queues["team-a-queued"]["spec"]
    assert queued["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "gkeml-queued-provisioning"}]
    }
    assert "admissionChecksStrategy" not in queues["team-a-flex-start"]["spec"]
    (group,) = queued["resourceGroups"]
    assert group["coveredResources"] == [
        "cpu", "memory", "ephemeral-storage", "google.com/tpu", "nvidia.com/gpu"
    ]  # fmt: skip
    gpu = next(f for f in group["flavors"] if f["name"] == "h100-queued")
    assert gpu["resources"][4] == {"name": "nvidia.com/gpu", "nominalQuota": "16",
                                   "borrowingLimit": "8"}  # fmt: skip
    assert gpu["resources"][3] == {"name": "google.com/tpu", "nominalQuota": "0"}
    team_b = queues["team-b"]["spec"]
    assert [f["name"] for f in team_b["resourceGroups"][0]["flavors"]] == ["h100-standard"]
    assert team_b["namespaceSelector"]["matchExpressions"][0]["values"] == ["team-b"]
    assert queues["team-a"]["spec"]["preemption"] == {
        "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority",
        "borrowWithinCohort": {"policy": "LowerPriority"},
    }
    local = [(o["metadata"]["namespace"], o["metadata"]["name"], o["spec"]["clusterQueue"])
             for o in objects if o["kind"] == "LocalQueue"]  # fmt: skip
    assert ("ml", "team-a-queued", "team-a-queued") in local
    assert ("team-b", "team-b", "team-b") in local


def test_provisioning_request_config_topology_and_priorities() -> None:
    objects = setup().compile().objects
    config = named(objects, "ProvisioningRequestConfig")["gkeml-queued-provisioning"]["spec"]
    assert config["provisioningClassName"] == "queued-provisioning.gke.io"
    assert config["managedResources"] == ["google.com/tpu", "nvidia.com/gpu"]
    assert config["retryStrategy"]["backoffLimitCount"] == 3
    check = named(objects, "AdmissionCheck")["gkeml-queued-provisioning"]["spec"]
    assert check["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    assert check["parameters"]["name"] == "gkeml-queued-provisioning"
    levels = named(objects, "Topology")["gke-default"]["spec"]["levels"]
    assert [lv["nodeLabel"] for lv in levels] == [
        "cloud.google.com/gce-topology-block",
        "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host",
        "kubernetes.io/hostname",
    ]
    assert named(objects, "WorkloadPriorityClass")["high"]["value"] == 1000


def test_without_queued_or_topology_those_objects_are_left_out() -> None:
    plain = ClusterSetup(
        capacity=[Capacity(accelerator=Accelerator("l4"), provisioning=["spot"])],
        teams=[Team(name="a", quota={"l4": 4})],
        priorities={},
    )
    kinds = {o["kind"] for o in plain.compile().objects}
    assert kinds == {"Namespace", "ResourceFlavor", "ClusterQueue", "LocalQueue"}


def test_a_setup_that_names_no_priorities_creates_low_normal_and_high() -> None:
    fresh = ClusterSetup(
        capacity=[Capacity(accelerator=Accelerator("l4"))], teams=[Team(name="a", quota={"l4": 4})]
    )
    classes = named(fresh.compile().objects, "WorkloadPriorityClass")
    assert {name: c["value"] for name, c in classes.items()} == {
        "low": 100,
        "normal": 500,
        "high": 1000,
    }
    for obj in classes.values():
        validate_object(obj)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"teams": [Team(name="a", quota={"a100": 1})]}, r"unknown capacity 'a100'.*h100"),
        ({"teams": [Team(name="a")]}, r"has no quota.*quota=\{'h100': 8\}"),
        ({"teams": [Team(name="a", quota={"h100": 1}), Team(name="a", quota={"h100": 1})]},
         "team names repeat: a"),
        ({"teams": [Team(name="a", namespaces=["ml"], quota={"h100": 1}),
                    Team(name="b", namespaces=["ml"], quota={"h100": 1})]},
         "namespace 'ml' belongs to teams 'a' and 'b'"),
        ({"reclaim_within_cohort": "Never"}, "borrow_within_cohort without reclaim"),
        ({"within_cluster_queue": "Always"}, "within_cluster_queue='Always'"),
        ({"teams": []}, "a setup has capacity and teams"),
    ],
)  # fmt: skip
def test_invalid_setups_are_spec_errors(change: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        setup(**change)


def test_capacity_rules() -> None:
    with pytest.raises(SpecError, match=r"does not offer TPU v4"):
        Capacity(accelerator=TpuSlice("v4", "2x2x1"), provisioning=["queued"])
    with pytest.raises(SpecError, match=r"flex-start with multi-host.*\['queued'\]"):
        Capacity(accelerator=TpuSlice("v6e", "4x4"), provisioning=["flex-start"])
    assert Capacity(accelerator=TpuSlice("v6e", "2x2"), provisioning=["flex-start"]).name
    with pytest.raises(SpecError, match="lists its provisioning modes once"):
        Capacity(accelerator=Accelerator("l4"), provisioning=["spot", "spot"])
    with pytest.raises(SpecError, match="provisioning"):
        Capacity(accelerator=Accelerator("l4"), provisioning=["reserved"])
    with pytest.raises(SpecError, match="count >= 0"):
        Team(name="a", quota={"l4": -1})


def test_loaded_from_a_yaml_file(tmp_path: Any) -> None:
    path = tmp_path / "setup.yaml"
    path.write_text(
        "kind: ClusterSetup\n"
        "capacity:\n- accelerator: {model: h100, count: 8}\n  provisioning: [queued]\n"
        "teams:\n- {name: team-a, namespaces: [ml], quota: {h100: 16}}\n"
    )
    loaded = ClusterSetup.from_file(path)
    assert loaded.teams[0].queue("queued") == "team-a-queued"
    assert loaded.capacity[0].flavor("queued") == "h100-queued"


def test_capacity_from_the_node_pools_a_platform_engineer_creates() -> None:
    from gkeml_sdk import NodePool

    h100, v5e = Accelerator("h100", count=8), TpuSlice("v5e", "4x4")
    pools = [
        NodePool(name="h100-dws", hardware=h100, provisioning="queued"),
        NodePool(name="v5e", hardware=v5e),
        NodePool(name="h100-spot", hardware=h100, spot=True),
        NodePool(name="h100-spot-b", hardware=h100, provisioning="spot"),
    ]
    found = Capacity.from_node_pools(pools, topology=True)
    # One per hardware, modes in catalog order, each mode once however many pools offer it.
    assert [(c.name, c.provisioning, c.topology) for c in found] == [
        ("h100", ("spot", "queued"), True),
        ("v5e-4x4", ("standard",), True),
    ]
    setup = ClusterSetup(capacity=found, teams=[Team(name="a", quota={"h100": 8, "v5e-4x4": 4})])
    flavors = [f["metadata"]["name"] for f in setup.compile().of_kind("ResourceFlavor")]
    assert flavors == ["h100-spot", "h100-queued", "v5e-4x4-standard"]


def test_pools_a_flavor_cannot_tell_apart_are_one_capacity_and_mig_pools_another() -> None:
    from gkeml_sdk import NodePool

    pools = [
        NodePool(name="h100-8", hardware=Accelerator("h100", count=8)),
        NodePool(name="h100-4", hardware=Accelerator("h100", count=4), spot=True),
        NodePool(name="a100", hardware=Accelerator("a100-80gb", count=8)),
        NodePool(name="a100-mig", hardware=Accelerator("a100-80gb", mig="1g.10gb")),
    ]
    found = Capacity.from_node_pools(pools)
    assert [(c.name, c.provisioning) for c in found] == [
        ("h100", ("standard", "spot")),
        ("a100-80gb", ("standard",)),
        ("a100-80gb-1g-10gb", ("standard",)),
    ]
    quota = {"h100": 16, "a100-80gb": 8, "a100-80gb-1g-10gb": 7}
    setup = ClusterSetup(capacity=found, teams=[Team(name="a", quota=quota)])
    flavors = {
        f["metadata"]["name"]: f["spec"]["nodeLabels"]
        for f in setup.compile().of_kind("ResourceFlavor")
    }
    partition = "cloud.google.com/gke-gpu-partition-size"
    assert partition not in flavors["a100-80gb-standard"]
    assert flavors["a100-80gb-1g-10gb-standard"][partition] == "1g.10gb"
    for obj in setup.compile().objects:
        validate_object(obj)


def test_a_setup_file_that_is_missing_or_not_utf8_is_a_spec_error(tmp_path: Any) -> None:
    with pytest.raises(SpecError, match="no such file"):
        ClusterSetup.from_file(tmp_path / "setup.yaml")
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("teams: [{name: \xe9quipe}]\n".encode("latin-1"))
    with pytest.raises(SpecError, match="not UTF-8 text"):
        ClusterSetup.from_file(latin1)
