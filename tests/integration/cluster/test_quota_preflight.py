"""Quota in the preflight of a cluster submission (issue 39): with `KubernetesSettings(quotas=
QuotaCheck(project, region))` a job is checked against the project's Compute Engine quotas,
read through the real `google-cloud-compute` clients from the loopback Compute API fake,
before anything is written to the test API server; answers are kept as the other checks'."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from gkeml_sdk import ConfigError, KubernetesSettings, SpecError, TpuSlice
from gkeml_sdk.backends.gke.quotas import QuotaCheck
from gkeml_sdk.backends.kubernetes.setup.preflight import PREFLIGHT_SECONDS, Preflight
from tests.gkeapi.compute import ComputeAPIServer
from tests.integration.test_gke_quotas import compute

from .conftest import make_client
from .test_scenarios import gang

__all__ = ["compute"]  # the loopback Compute fake, as the GKE quota tests start it
REGION = "/compute/v1/projects/ml-proj/regions/us-central1"
PROJECT = "/compute/v1/projects/ml-proj"


def quotas(compute: ComputeAPIServer) -> QuotaCheck:
    return QuotaCheck("ml-proj", "us-central1-a", credentials=AnonymousCredentials(),
                      client_options={"api_endpoint": compute.url})  # fmt: skip


@pytest.fixture
def client(cluster: Any, compute: ComputeAPIServer) -> Any:
    return make_client(cluster, quotas=quotas(compute))


def test_a_job_beyond_the_quota_limit_is_refused_before_any_write(cluster, client, compute):
    compute.grant("NVIDIA_H100_GPUS", 8, usage=2, region="us-central1")
    cluster.clear_request_log()
    with pytest.raises(ConfigError) as refused:
        client.submit(gang("big"))  # 2 nodes of 8 H100
    text = str(refused.value)
    assert text.startswith(
        "job 'big' (standard) needs 16 H100 GPUs in us-central1 at once, more than its quota "
        "allows (NVIDIA_H100_GPUS: limit 8, 2 in use, 6 left). What would work: raise the "
        "quotas named to 16 under IAM & Admin > Quotas; or nodes=1 (8 GPUs); or a cluster in "
        "a region with quota for it (where_offered('h100'))"
    )
    assert cluster.count("POST") == 0
    assert compute.requests == [("GET", REGION), ("GET", PROJECT)]


def test_with_room_nothing_is_said_and_the_answer_is_kept(cluster, client, compute, caplog):
    compute.grant("NVIDIA_H100_GPUS", 16, region="us-central1")
    now = [0.0]
    backend = client._backend
    backend.preflight = Preflight(backend.kube, clock=lambda: now[0], quotas=quotas(compute))
    with caplog.at_level(logging.WARNING, logger="gkeml_sdk"):
        client.submit(gang("first"))
        client.submit(gang("second"))
    assert caplog.records == []
    assert compute.requests == [("GET", REGION), ("GET", PROJECT)]  # once for both
    now[0] = PREFLIGHT_SECONDS + 1
    client.submit(gang("third"))
    assert len(compute.requests) == 4 and cluster.count("POST") == 6


def test_a_quota_in_use_elsewhere_is_a_warning_not_a_refusal(cluster, client, compute, caplog):
    # 12 of 16 in use: the job fits the limit, so it may run on nodes already up, or wait.
    compute.grant("PREEMPTIBLE_NVIDIA_H100_GPUS", 16, usage=12, region="us-central1")
    with caplog.at_level(logging.WARNING, logger="gkeml_sdk"):
        client.submit(gang("spot", spot=True))
    (said,) = [r.getMessage() for r in caplog.records]
    assert said.startswith(
        "job 'spot' (spot) needs 16 H100 GPUs in us-central1 at once; 4 are left of "
        "PREEMPTIBLE_NVIDIA_H100_GPUS (limit 16, 12 in use)"
    )
    assert cluster.count("POST") >= 2


def test_one_mode_of_a_capacity_order_with_room_is_enough(cluster, client, compute, caplog):
    # No on-demand H100 quota in the region at all, but Spot has room.
    compute.grant("PREEMPTIBLE_NVIDIA_H100_GPUS", 16, region="us-central1")
    with caplog.at_level(logging.WARNING, logger="gkeml_sdk"):
        client.submit(gang("order", capacity=["standard", "spot"]))
    assert caplog.records == []
    # With neither, both modes are named in the refusal.
    compute.grant("PREEMPTIBLE_NVIDIA_H100_GPUS", 8, region="us-central1")
    with pytest.raises(ConfigError) as refused:
        client.submit(gang("order2", capacity=["standard", "spot"], nodes=3))
    text = str(refused.value)
    assert (
        "job 'order2' (standard) needs 24 H100 GPUs in us-central1 at once; Compute Engine "
        "lists no NVIDIA_H100_GPUS quota in us-central1; job 'order2' (spot) needs 24" in text
    )
    assert "nodes=1 (8 GPUs)" in text


def test_the_project_quota_counts_and_tpus_are_checked_in_chips(cluster, client, compute):
    compute.grant("NVIDIA_H100_GPUS", 32, region="us-central1")
    compute.grant("GPUS_ALL_REGIONS", 8)
    with pytest.raises(ConfigError, match="16 GPUs across all regions at once, more than its "
                       r"quota allows \(GPUS_ALL_REGIONS: limit 8"):  # fmt: skip
        client.submit(gang("wide"))
    compute.grant("PREEMPTIBLE_TPU_LITE_PODSLICE_V5", 16, region="us-central1")
    tpu = TpuSlice("v5e", "4x4", slices=2)  # 32 chips
    with pytest.raises(ConfigError, match="needs 32 V5E TPU chips in us-central1 at once"):
        client.submit(gang("tpu", accelerator=tpu, nodes=tpu.total_hosts, spot=True))


def test_unreadable_quotas_and_reservations_let_the_job_through(cluster, client, compute, caplog):
    compute.deny(REGION, "compute.regions.get")
    with caplog.at_level(logging.WARNING, logger="gkeml_sdk"):
        client.submit(gang("denied"))
    (said,) = [r.getMessage() for r in caplog.records]
    assert said.startswith("job 'denied': quotas not checked (")
    assert "roles/compute.viewer" in said
    # A reservation holds its VMs' quota: nothing is read for a job pinned to one.
    compute.requests.clear()
    client.submit(gang("reserved", reservation="h100-res"))
    assert compute.requests == []


def test_quotas_must_read_for_a_job() -> None:
    with pytest.raises(SpecError, match=r"quotas=ml-proj .*QuotaCheck"):
        KubernetesSettings(quotas="ml-proj")  # type: ignore[arg-type]
