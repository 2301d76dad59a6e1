"""Quota before anything is created: node pools and setup capacities at their ceilings
against the project's Compute Engine quotas, read through the real `google-cloud-compute`
clients over REST from the loopback Compute API fake (`regions.get`, `projects.get`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials

from gkeml_sdk import Accelerator, ConfigError, NodePool, TpuSlice
from gkeml_sdk.backends.gke.quotas import QuotaCheck
from gkeml_sdk.cli.main import main
from tests.gkeapi import GkeAPIServer
from tests.gkeapi.compute import ComputeAPIServer

CLUSTER = "projects/ml-proj/locations/us-central1/clusters/train"
H100 = Accelerator("h100", count=8)


@pytest.fixture
def compute() -> Iterator[ComputeAPIServer]:
    with ComputeAPIServer() as server:
        server.add_region("us-central1")
        server.grant("GPUS_ALL_REGIONS", 64)
        yield server


def _check(compute: ComputeAPIServer, location: str = "us-central1") -> QuotaCheck:
    return QuotaCheck("ml-proj", location, credentials=AnonymousCredentials(),
                      client_options={"api_endpoint": compute.url})  # fmt: skip


def test_a_pool_beyond_the_regional_quota_is_named_with_its_numbers(
    compute: ComputeAPIServer,
) -> None:
    compute.grant("NVIDIA_H100_GPUS", 8, region="us-central1")
    (said,) = _check(compute, "us-central1-a").for_pools(
        [NodePool(name="h100", hardware=H100, max_nodes=2)]
    )
    assert said.startswith(
        "pool h100 at max size needs 16 H100 GPUs in us-central1; your quota is 8 "
        "(NVIDIA_H100_GPUS: limit 8)"
    )
    assert "lower max_nodes" in said
    # A zone location reads its region once, and the project quota once.
    assert compute.requests == [
        ("GET", "/compute/v1/projects/ml-proj/regions/us-central1"),
        ("GET", "/compute/v1/projects/ml-proj"),
    ]


def test_with_enough_quota_nothing_is_said(compute: ComputeAPIServer) -> None:
    compute.grant("NVIDIA_H100_GPUS", 16, region="us-central1")
    compute.grant("PREEMPTIBLE_TPU_LITE_PODSLICE_V5", 32, region="us-central1")
    pools = [
        NodePool(name="h100", hardware=H100, max_nodes=2),
        NodePool(name="v5e", hardware=TpuSlice("v5e", "4x4", slices=2), spot=True),
    ]
    assert _check(compute).for_pools(pools) == []


def test_usage_spot_and_the_project_quota_count(compute: ComputeAPIServer) -> None:
    # 12 of 16 in use leaves 4; Spot and flex-start pools share the preemptible quota.
    compute.grant("PREEMPTIBLE_NVIDIA_H100_GPUS", 16, usage=12, region="us-central1")
    compute.grant("GPUS_ALL_REGIONS", 20, usage=8)
    pools = [
        NodePool(name="spot", hardware=H100, spot=True),
        NodePool(name="dws", hardware=H100, provisioning="flex-start"),
    ]
    regional, project = _check(compute).for_pools(pools)
    assert regional.startswith(
        "pool spot, pool dws at max size need 16 H100 GPUs in us-central1; your quota is 4 "
        "(PREEMPTIBLE_NVIDIA_H100_GPUS: limit 16, 12 in use)"
    )
    assert project.startswith(
        "pool spot, pool dws at max size need 16 GPUs across all regions; your quota is 12 "
        "(GPUS_ALL_REGIONS: limit 20, 8 in use)"
    )


def test_what_compute_does_not_list_or_name_is_said(compute: ComputeAPIServer) -> None:
    pools = [
        NodePool(name="l4", hardware=Accelerator("l4")),
        NodePool(name="v6e", hardware=TpuSlice("v6e", "2x2")),
        NodePool(name="held", hardware=H100, reservation="h100-res"),  # holds its own quota
    ]
    missing, unchecked = _check(compute).for_pools(pools)
    assert missing.startswith("pool l4 at max size needs 1 L4 GPUs in us-central1; Compute")
    assert "lists no NVIDIA_L4_GPUS quota in us-central1" in missing
    assert unchecked.startswith("pool v6e: no Compute Engine quota metric is known for v6e")


def test_an_unknown_region_is_refused(compute: ComputeAPIServer) -> None:
    with pytest.raises(ConfigError, match="no region 'europe-north1' in project ml-proj"):
        _check(compute, "europe-north1").for_pools([NodePool(name="l4", hardware=H100)])


def test_nodepool_create_says_the_shortfall_before_any_create(
    compute: ComputeAPIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compute.grant("NVIDIA_H100_GPUS", 8, region="us-central1")
    file = tmp_path / "pools.yaml"
    file.write_text("- {name: h100, hardware: {model: h100, count: 8}, max_nodes: 2}\n")
    with GkeAPIServer(clusters=[CLUSTER]) as gke:
        gke.fail("POST", rf"/v1/{CLUSTER}/nodePools", 403, "denied")
        where = ["--project", "ml-proj", "--location", "us-central1", "--cluster", "train"]
        fakes = ["--endpoint", gke.url, "--compute-endpoint", compute.url]
        assert main(["nodepool", "create", str(file), *where, *fakes]) == 1
    quota, error = capsys.readouterr().err.splitlines()
    assert quota.startswith("gkeml: quota: pool h100 at max size needs 16 H100 GPUs in us-central1")
    assert error.startswith("gkeml: error: create node pool h100: 403")


SETUP = """\
capacity:
  - accelerator: {model: h100, count: 8}
    provisioning: [standard, spot]
teams:
  - {name: a, quota: {h100: 16}}
  - {name: b, quota: {h100: 8}}
"""


def test_setup_plan_checks_each_modes_quota(
    compute: ComputeAPIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compute.grant("NVIDIA_H100_GPUS", 24, region="us-central1")
    compute.grant("PREEMPTIBLE_NVIDIA_H100_GPUS", 16, region="us-central1")
    file = tmp_path / "setup.yaml"
    file.write_text(SETUP)
    target = ["--project", "ml-proj", "--region", "us-central1", "--compute-endpoint", compute.url]
    assert main(["setup", "plan", str(file), "--offline", *target]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("# quota")]
    assert said == [
        "# quota: capacity h100 (spot) at max size needs 24 H100 GPUs in us-central1; your "
        "quota is 16 (PREEMPTIBLE_NVIDIA_H100_GPUS: limit 16): raise it under IAM & Admin > "
        "Quotas, lower the teams' quota, or use another region",
    ]
    compute.grant("PREEMPTIBLE_NVIDIA_H100_GPUS", 24, region="us-central1")
    assert main(["setup", "plan", str(file), "--offline", *target]) == 0
    assert "# quota" not in capsys.readouterr().out


def test_setup_plan_refuses_a_region_without_the_accelerator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "setup.yaml"
    file.write_text(SETUP.replace("{model: h100, count: 8}", "{generation: v5p, topology: 2x2x1}")
                    .replace("h100:", "v5p-2x2x1:"))  # fmt: skip
    assert main(["setup", "plan", str(file), "--offline", "--region", "us-west1"]) == 1
    err = capsys.readouterr().err
    assert "in region 'us-west1'" in err and "only in us-central1-a, us-east5-a" in err
    assert "a region with it: us-central1, us-east5" in err
    assert main(["setup", "plan", str(file), "--offline", "--region", "us-east5"]) == 0


def test_with_enough_quota_nodepool_create_says_nothing_and_creates(
    compute: ComputeAPIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compute.grant("NVIDIA_H100_GPUS", 16, region="us-central1")
    file = tmp_path / "pools.yaml"
    file.write_text("- {name: h100, hardware: {model: h100, count: 8}, max_nodes: 2}\n")
    with GkeAPIServer(clusters=[CLUSTER]) as gke:
        where = ["--project", "ml-proj", "--location", "us-central1", "--cluster", "train"]
        fakes = ["--endpoint", gke.url, "--compute-endpoint", compute.url]
        assert main(["nodepool", "create", str(file), *where, *fakes]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("created h100\n", "")


def test_quotas_a_role_may_not_read_are_said_not_checked(
    compute: ComputeAPIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compute.deny("/compute/v1/projects/ml-proj/regions/us-central1", "compute.regions.get")
    file = tmp_path / "pools.yaml"
    file.write_text("- {name: l4, hardware: {model: l4}}\n")
    with GkeAPIServer(clusters=[CLUSTER]) as gke:
        where = ["--project", "ml-proj", "--location", "us-central1", "--cluster", "train"]
        fakes = ["--endpoint", gke.url, "--compute-endpoint", compute.url]
        assert main(["nodepool", "create", str(file), *where, *fakes]) == 0
    out, err = capsys.readouterr()
    assert out == "created l4\n"
    assert err.startswith("gkeml: quota: not checked: read the Compute Engine quotas of ")
    assert "403 FORBIDDEN: Required 'compute.regions.get' permission for 'projects/ml-proj/" in err
    assert "grant the caller roles/compute.viewer" in err
