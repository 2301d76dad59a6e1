"""GkeClient through the real google-cloud-container client (REST transport, anonymous
credentials) against the loopback fake of the GKE v1 API: operations polled to DONE,
transient errors retried, quota and permission failures reported as such."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import container_v1

from gkeml_sdk import (
    Accelerator,
    GkeClient,
    GkeError,
    GkePermissionError,
    NodePool,
    QuotaError,
    SpecError,
    TpuSlice,
)
from gkeml_sdk.backends.gke.messages import node_pool_messages
from tests.gkeapi import GkeAPIServer

CLUSTER = "projects/ml-proj/locations/us-central1/clusters/train"
POOLS = rf"/v1/{CLUSTER}/nodePools"
QUOTA = (
    'Insufficient regional quota to satisfy request: resource "NVIDIA_H100_GPUS": request '
    "requires '32.0' and is short '32.0'. project has a quota of '0.0' with '0.0' available. "
    "View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED"
    "&project=ml-proj."
)
H100 = NodePool.for_accelerator(
    Accelerator("h100", count=8), name="h100", provisioning="queued", max_nodes=4
)


@pytest.fixture
def gke_api() -> Iterator[GkeAPIServer]:
    with GkeAPIServer(clusters=[CLUSTER]) as server:
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def gke(gke_api: GkeAPIServer, sleeps: list[float]) -> GkeClient:
    return GkeClient(
        "ml-proj", "us-central1", "train", client=gke_api.client(), sleep=sleeps.append
    )


def _calls(server: GkeAPIServer, method: str, suffix: str = "") -> int:
    return sum(1 for m, path in server.state.log if m == method and path.endswith(suffix))


def test_create_polls_the_operation_from_running_to_done(
    gke: GkeClient, gke_api: GkeAPIServer, sleeps: list[float]
) -> None:
    assert gke.create(H100) == ["h100"]
    # PENDING on create, then RUNNING, RUNNING, DONE: three reads, a poll interval before each.
    assert _calls(gke_api, "GET") == 3 and sleeps == [5.0, 5.0, 5.0]
    (op,) = gke_api.state.ops.values()
    assert op.message.status == container_v1.Operation.Status.DONE
    assert op.message.operation_type == container_v1.Operation.Type.CREATE_NODE_POOL
    assert op.message.target_link.endswith(f"{CLUSTER}/nodePools/h100")
    pool = gke.get("h100")
    assert pool.status == container_v1.NodePool.Status.RUNNING
    assert pool.queued_provisioning.enabled and pool.config.flex_start
    assert pool.config.accelerators[0].accelerator_type == "nvidia-h100-80gb"


def test_multislice_creates_every_slice_pool(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    pool = NodePool(name="v5e", hardware=TpuSlice("v5e", "4x4", slices=2), spot=True)
    with pytest.raises(SpecError, match=r"Try: zones=\('us-central1-a',\)"):
        gke.create(pool)  # a regional cluster would spread the slice over its zones
    assert gke_api.state.log == []
    pool = pool.model_copy(update={"zones": ("us-central1-b",)})
    assert gke.create(pool) == ["v5e-0", "v5e-1"]
    listed = gke.client.list_node_pools(parent=CLUSTER).node_pools
    assert {p.name: p.placement_policy.tpu_topology for p in listed} == {
        "v5e-0": "4x4",
        "v5e-1": "4x4",
    }


def test_resize_autoscaling_and_delete(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    gke.create(NodePool(name="l4", hardware=Accelerator("l4"), spot=True, max_nodes=2))
    gke.resize("l4", 2)
    assert gke_api.state.sizes[f"{CLUSTER}/nodePools/l4"] == 2
    gke.set_autoscaling("l4", 0, 6)
    scaling = gke.get("l4").autoscaling
    assert (scaling.total_min_node_count, scaling.total_max_node_count) == (0, 6)
    assert scaling.location_policy == container_v1.NodePoolAutoscaling.LocationPolicy.ANY
    gke.delete("l4")
    with pytest.raises(GkeError, match="404 NOT_FOUND"):
        gke.get("l4")


def test_transient_503_is_retried_and_succeeds(
    gke: GkeClient, gke_api: GkeAPIServer, sleeps: list[float]
) -> None:
    gke_api.fail("POST", POOLS, 503, "The service is currently unavailable.", times=2)
    assert gke.create(H100) == ["h100"]
    assert _calls(gke_api, "POST") == 3
    assert len(sleeps) == 2 + 3  # two backoffs, then three poll intervals


def test_quota_refusal_is_a_quota_error_and_not_retried(
    gke: GkeClient, gke_api: GkeAPIServer
) -> None:
    gke_api.fail("POST", POOLS, 403, QUOTA)
    with pytest.raises(QuotaError) as caught:
        gke.create(H100)
    err = caught.value
    assert (err.status, err.reason) == (403, "PERMISSION_DENIED")
    assert err.message == QUOTA and "raise the quota" in str(err)
    assert _calls(gke_api, "POST") == 1


def test_rate_limit_is_retried_then_reported_as_rate_limiting_not_quota(
    gke: GkeClient, gke_api: GkeAPIServer
) -> None:
    limit = "Quota exceeded for quota metric 'Write requests' of service container.googleapis.com"
    gke_api.fail("POST", POOLS, 429, limit, times=100)
    with pytest.raises(GkeError, match="429 RESOURCE_EXHAUSTED") as caught:
        gke.create(H100)
    assert not isinstance(caught.value, QuotaError)
    assert "request rate" in caught.value.hint and "raise the quota" not in str(caught.value)
    assert _calls(gke_api, "POST") == gke.attempts


def test_rate_limit_once_is_retried_and_succeeds(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    gke_api.fail("POST", POOLS, 429, "Quota exceeded for quota metric 'Write requests'")
    assert gke.create(H100) == ["h100"]
    assert _calls(gke_api, "POST") == 2


def test_operation_that_ends_in_a_quota_error(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    gke_api.fail_create("h100", 8, QUOTA)
    with pytest.raises(QuotaError, match="RESOURCE_EXHAUSTED: Insufficient regional quota"):
        gke.create(H100)


def test_operation_stockout_names_other_capacity(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    gke_api.fail_create("h100", 8, "ZONE_RESOURCE_POOL_EXHAUSTED: no a3-highgpu-8g available")
    with pytest.raises(GkeError, match="provisioning='flex-start'") as caught:
        gke.create(H100)
    assert not isinstance(caught.value, QuotaError)


def test_permission_denied(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    gke_api.deny("container.nodePools.create")
    with pytest.raises(GkePermissionError) as caught:
        gke.create(H100)
    assert 'Required "container.nodePools.create" permission(s)' in caught.value.message
    assert "roles/container.clusterAdmin" in str(caught.value)
    assert _calls(gke_api, "POST") == 1


def test_existing_pool_and_unknown_cluster(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    gke.create(H100)
    with pytest.raises(GkeError, match="409 ALREADY_EXISTS"):
        gke.create(H100)
    other = GkeClient("ml-proj", "us-central1", "nope", client=gke.client, sleep=lambda s: None)
    with pytest.raises(GkeError, match="404 NOT_FOUND: Not found"):
        other.create(H100)


class Clock:
    """Wall time that moves only when the client sleeps, or a request `costs` it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_operation_timeout(gke_api: GkeAPIServer) -> None:
    gke_api.state.steps = (2,) * 10  # RUNNING for longer than the client waits
    clock = Clock()
    gke = GkeClient(
        "ml-proj", "us-central1", "train", client=gke_api.client(), timeout_seconds=20,
        sleep=clock.sleep, clock=clock,
    )  # fmt: skip
    with pytest.raises(GkeError, match=r"TIMEOUT: operation .* still RUNNING after 20 s"):
        gke.create(H100)
    assert _calls(gke_api, "GET") == 4  # polls at 5, 10, 15 and 20 s


def test_timeout_counts_the_time_requests_take_not_only_poll_intervals(
    gke_api: GkeAPIServer,
) -> None:
    gke_api.state.steps = (2,) * 10
    clock = Clock()

    class SlowClient:  # every request takes 10 s of wall time, as on a slow network
        def __getattr__(self, name: str) -> object:
            method = getattr(real, name)

            def call(*args: object, **kwargs: object) -> object:
                clock.now += 10
                return method(*args, **kwargs)

            return call

    real = gke_api.client()
    gke = GkeClient(
        "ml-proj", "us-central1", "train", client=SlowClient(), timeout_seconds=20,  # type: ignore[arg-type]
        sleep=clock.sleep, clock=clock,
    )  # fmt: skip
    with pytest.raises(GkeError, match="TIMEOUT"):
        gke.create(H100)
    # The wait starts after the create: 5 s + a 10 s read, then 5 s + 10 s = 30 s > 20 s.
    # Counting poll intervals only, it would read four times (5, 10, 15, 20 s).
    assert _calls(gke_api, "GET") == 2


@pytest.mark.parametrize(
    ("how", "status", "reason"),
    [("html", 200, "BAD_RESPONSE"), ("html", 502, "502"), ("drop", 502, "UNAVAILABLE")],
)
def test_transport_failures_are_gke_errors(
    gke_api: GkeAPIServer, how: str, status: int, reason: str
) -> None:
    gke_api.break_transport("POST", POOLS, how, times=100, status=status)
    gke = GkeClient(
        "ml-proj", "us-central1", "train", client=gke_api.client(), sleep=lambda s: None
    )
    with pytest.raises(GkeError, match=reason) as caught:
        gke.create(H100)
    assert len(str(caught.value)) < 1000


def test_a_request_without_an_answer_is_retried_then_a_gke_timeout(
    gke_api: GkeAPIServer,
) -> None:
    gke_api.break_transport("GET", rf"/v1/{CLUSTER}/nodePools/h100", "hang", times=100)
    gke = GkeClient(
        "ml-proj", "us-central1", "train", client=gke_api.client(), sleep=lambda s: None,
        attempts=2, request_timeout_seconds=0.2,
    )  # fmt: skip
    with pytest.raises(GkeError, match=r"TIMEOUT: no answer from the GKE API within 0\.2 s"):
        gke.get("h100")
    assert _calls(gke_api, "GET") == 2


def test_an_answer_that_trickles_in_is_bounded_as_a_whole(gke_api: GkeAPIServer) -> None:
    # A byte every 20 ms keeps every read within the transport's own 0.2 s timeout, for the
    # 33 minutes the 100 kB answer would take; the whole request is what is bounded.
    gke_api.break_transport("GET", rf"/v1/{CLUSTER}/nodePools/h100", "trickle", times=100)
    gke = GkeClient(
        "ml-proj", "us-central1", "train", client=gke_api.client(), sleep=lambda s: None,
        attempts=2, request_timeout_seconds=0.2,
    )  # fmt: skip
    try:
        with pytest.raises(GkeError, match=r"TIMEOUT: no answer from the GKE API within 0\.2 s"):
            gke.get("h100")
        assert _calls(gke_api, "GET") == 2
    finally:
        gke_api.state.release.set()  # the abandoned requests' trickles end


def test_the_fake_refuses_what_gke_refuses(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    # A queued-provisioning pool on Spot, sent past NodePool's own checks.
    (message,) = node_pool_messages(H100)
    message.config.spot = True
    request = container_v1.CreateNodePoolRequest(parent=CLUSTER, node_pool=message)
    with pytest.raises(Exception, match="Spot"):
        gke.client.create_node_pool(request=request)


def test_the_example_prints_and_creates_its_pools(gke_api: GkeAPIServer) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "node_pools.py"
    printed = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert "queuedProvisioning:\n    enabled: true" in printed
    assert "tpuTopology: 4x4" in printed and "name: v5e-spot-1" in printed
    assert "# note: GKE creates and attaches a3-highgpu-8g's 4 GPUDirect-TCPX networks" in printed
    create = [str(example), "--create", CLUSTER.replace("projects/", "").replace(
        "/locations/", "/").replace("/clusters/", "/"), "--endpoint", gke_api.url]  # fmt: skip
    done = subprocess.run(
        [sys.executable, *create], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "created h100-dws" in done.stdout and "created v5e-spot-0, v5e-spot-1" in done.stdout
    assert sorted(name.rsplit("/", 1)[1] for name in gke_api.state.pools) == [
        "h100-dws",
        "v5e-spot-0",
        "v5e-spot-1",
    ]


def test_a_create_whose_answer_was_lost_is_followed_not_repeated(
    gke: GkeClient, gke_api: GkeAPIServer
) -> None:
    # GKE took the first POST but the 503 hid it; the retry meets ALREADY_EXISTS.
    gke_api.fail("POST", POOLS, 503, "The service is currently unavailable.", after=True)
    assert gke.create(H100) == ["h100"]
    assert _calls(gke_api, "POST") == 2 and len(gke_api.state.ops) == 1
    assert gke.get("h100").status == container_v1.NodePool.Status.RUNNING


def test_a_503_while_polling_is_retried(gke: GkeClient, gke_api: GkeAPIServer) -> None:
    gke_api.fail("GET", r"/v1/projects/ml-proj/locations/us-central1/operations/.*", 503, "x")
    assert gke.create(H100) == ["h100"]
    assert _calls(gke_api, "GET") == 4  # the failed read, then RUNNING, RUNNING, DONE
