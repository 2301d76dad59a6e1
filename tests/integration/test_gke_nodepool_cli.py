"""`gkeml nodepool plan|create|delete`: the requests printed offline, and pools created and
deleted through the real client library against the loopback fake of the GKE API."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from gkeml_sdk import Accelerator, NodePool, TpuSlice
from gkeml_sdk.cli.main import main
from tests.gkeapi import GkeAPIServer

CLUSTER = "projects/ml-proj/locations/us-central1/clusters/train"
POOLS = """\
- name: h100-dws
  hardware: {model: h100, count: 8}
  provisioning: queued
  max_nodes: 4
- name: v5e-spot
  hardware: {generation: v5e, topology: 4x4, slices: 2}
  spot: true
  zones: [us-central1-a]
"""
QUOTA = (
    'Insufficient regional quota to satisfy request: resource "NVIDIA_H100_GPUS": request '
    "requires '32.0' and is short '32.0'. project has a quota of '0.0' with '0.0' available."
)


@pytest.fixture
def pools(tmp_path: Path) -> str:
    file = tmp_path / "pools.yaml"
    file.write_text(POOLS)
    return str(file)


@pytest.fixture
def gke_api() -> Iterator[GkeAPIServer]:
    with GkeAPIServer(clusters=[CLUSTER]) as server:
        yield server


def _target(server: GkeAPIServer) -> list[str]:
    where = ["--project", "ml-proj", "--location", "us-central1", "--cluster", "train"]
    return [*where, "--endpoint", server.url]


def _pool_names(server: GkeAPIServer) -> list[str]:
    listed = server.client().list_node_pools(parent=CLUSTER).node_pools
    return sorted(pool.name for pool in listed)


def _one_line_error(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("gkeml: error: ")
    return err


def test_plan_prints_each_request_and_its_notes(
    pools: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["nodepool", "plan", pools]) == 0
    out = capsys.readouterr().out
    h100, v5e = yaml.safe_load_all(out)
    assert (
        h100
        == NodePool.for_accelerator(
            Accelerator("h100", count=8), name="h100-dws", provisioning="queued", max_nodes=4
        ).to_dict()
    )
    assert (
        v5e
        == NodePool.for_accelerator(
            TpuSlice("v5e", "4x4", slices=2), name="v5e-spot", spot=True, zones=("us-central1-a",)
        ).to_dict()
    )
    # The multislice pool is one pool per slice, each of the slice's topology.
    assert [(p["name"], p["placementPolicy"]["tpuTopology"]) for p in v5e["nodePools"]] == [
        ("v5e-spot-0", "4x4"),
        ("v5e-spot-1", "4x4"),
    ]
    assert "# note: GKE taints queued-provisioning nodes with cloud.google.com/gke-queued" in out
    assert "# NodePool('v5e-spot', TpuSlice('v5e', '4x4', slices=2), spot=True)" in out


def test_plan_needs_no_gke_client_library(pools: str) -> None:
    # With every google package blocked, plan still prints the requests.
    code = (
        "import sys; sys.modules['google'] = None\n"
        "from gkeml_sdk.cli.main import main\n"
        f"code = main(['nodepool', 'plan', {pools!r}])\n"
        "assert not [m for m in sys.modules if m.startswith('google.')]\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "name: v5e-spot-1" in done.stdout and "queuedProvisioning:" in done.stdout


def test_the_docs_show_this_file() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "node-pools.md"
    assert f"```yaml\n{POOLS}```" in page.read_text()


def test_kind_nodepool_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "l4.yaml"
    file.write_text("kind: NodePool\nname: l4\nhardware: {model: l4}\nspot: true\n")
    assert main(["nodepool", "plan", str(file)]) == 0
    (request,) = yaml.safe_load(capsys.readouterr().out)["nodePools"]
    assert request["name"] == "l4" and request["config"]["spot"] is True


def test_create_then_delete_through_the_gke_api(
    pools: str, gke_api: GkeAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["nodepool", "create", pools, *_target(gke_api)]) == 0
    assert capsys.readouterr().out == "created h100-dws\ncreated v5e-spot-0, v5e-spot-1\n"
    assert _pool_names(gke_api) == ["h100-dws", "v5e-spot-0", "v5e-spot-1"]
    assert main(["nodepool", "delete", "v5e-spot-0", "v5e-spot-1", *_target(gke_api)]) == 0
    assert capsys.readouterr().out == "deleted v5e-spot-0\ndeleted v5e-spot-1\n"
    assert _pool_names(gke_api) == ["h100-dws"]


def test_quota_refusal_is_one_line(
    pools: str, gke_api: GkeAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    gke_api.fail("POST", rf"/v1/{CLUSTER}/nodePools", 403, QUOTA)
    assert main(["nodepool", "create", pools, *_target(gke_api)]) == 1
    err = _one_line_error(capsys.readouterr().err)
    assert "create node pool h100-dws: 403 PERMISSION_DENIED: Insufficient regional" in err
    assert "raise the quota" in err


def test_deleting_an_unknown_pool_is_one_line(
    gke_api: GkeAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["nodepool", "delete", "nope", *_target(gke_api)]) == 1
    assert "delete node pool nope: 404 NOT_FOUND" in _one_line_error(capsys.readouterr().err)


def test_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nodepool", "plan", str(tmp_path / "none.yaml")]) == 1
    assert "none.yaml: no such file" in _one_line_error(capsys.readouterr().err)


def test_invalid_pool_is_refused_before_any_request(
    tmp_path: Path, gke_api: GkeAPIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "bad.yaml"
    file.write_text(POOLS.replace("slices: 2}", "slices: 2}\n  max_nodes: 9"))
    assert main(["nodepool", "create", str(file), *_target(gke_api)]) == 1
    err = _one_line_error(capsys.readouterr().err)
    assert "node pool v5e-spot: a TPU v5e 4x4 pool with min/max/initial nodes 0/9/0" in err
    assert "Try: max_nodes=4" in err
    assert gke_api.state.log == []  # the valid h100 pool was not created either


def test_same_pool_name_twice_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "twice.yaml"
    file.write_text(POOLS + "- {name: v5e-spot-1, hardware: {model: l4}}\n")
    assert main(["nodepool", "plan", str(file)]) == 1
    assert "node pool name(s) v5e-spot-1 used twice" in _one_line_error(capsys.readouterr().err)


def test_no_credentials_is_one_line(
    pools: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An explicit key file that does not exist: google.auth stops there, before any lookup.
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "key.json"))
    where = ["--project", "ml-proj", "--location", "us-central1", "--cluster", "train"]
    assert main(["nodepool", "create", pools, *where]) == 1
    err = _one_line_error(capsys.readouterr().err)
    assert "no Google credentials for the GKE API" in err
    assert "gcloud auth application-default login" in err
