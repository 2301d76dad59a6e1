"""GPUDirect VPCs and subnets through the real `google-cloud-compute` clients over REST, against
the loopback Compute API fake: named as `gkeml setup`'s GKE Network objects, created once,
each operation polled to DONE with the test's clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gkeml_sdk import Accelerator, Capacity, ConfigError
from gkeml_sdk.backends.gke.gpu_networks import GpuNetworks
from gkeml_sdk.setup.gpudirect import capacity_stack, vpc_names
from tests.gkeapi.compute import ComputeAPIServer


@pytest.fixture
def compute() -> Iterator[ComputeAPIServer]:
    with ComputeAPIServer() as server:
        yield server


def test_an_a4_capacity_gets_its_gvnic_and_rdma_networks_once(compute: ComputeAPIServer) -> None:
    slept: list[float] = []
    nets = GpuNetworks("proj", "us-central1", zone="us-central1-b", clients=compute.clients(),
                       poll_seconds=2.0, sleep=slept.append)  # fmt: skip
    capacity = Capacity(accelerator=Accelerator("b200", count=8), gpudirect_vpc="gd")
    created = nets.create(capacity)
    assert created == ["gd-gvnic-1", "gd-rdma", "gd-gvnic-1", *(f"gd-rdma-{i}" for i in range(8))]
    assert compute.networks["gd-rdma"]["networkProfile"].endswith(
        "/networkProfiles/us-central1-b-vpc-roce"
    )
    assert (compute.networks["gd-rdma"]["mtu"], compute.networks["gd-gvnic-1"]["mtu"]) == (
        8896,
        8244,
    )
    # The subnets are the names the setup's GKENetworkParamSets point at.
    stack = capacity_stack(capacity)
    assert stack is not None
    assert set(compute.subnets) == {s for _, _, s in vpc_names(stack, "gd")}
    assert compute.subnets["gd-rdma-3"]["network"].endswith("/global/networks/gd-rdma")
    # Each of the 11 operations was read until DONE: two polls each (RUNNING, then DONE).
    assert slept == [2.0] * 22
    assert all(op["status"] == "DONE" for op in compute.operations.values())
    before = len(compute.operations)
    assert nets.create(capacity) == []  # everything exists: nothing inserted again
    assert len(compute.operations) == before


def test_what_cannot_be_created_says_why(compute: ComputeAPIServer) -> None:
    nets = GpuNetworks("proj", "us-central1", clients=compute.clients(), sleep=lambda _: None)
    with pytest.raises(ConfigError, match=r"RoCE network profile.*zone="):
        nets.create(Capacity(accelerator=Accelerator("h200", count=8), gpudirect_vpc="gd"))
    with pytest.raises(ConfigError, match="accelerator_network_profile='auto'"):
        nets.create(Capacity(accelerator=Accelerator("h100-mega", count=8)))


def test_a_reservation_of_another_machine_type_is_refused(compute: ComputeAPIServer) -> None:
    from google.auth.credentials import AnonymousCredentials

    from gkeml_sdk import SpecError, TrainingJob
    from gkeml_sdk.backends.gke.reservations import ReservationCheck
    from gkeml_sdk.scheduling.capacity_order import job_reservation

    compute.reserve("owner-proj", "us-central1-a", "h100-res", "a3-highgpu-8g", 4)
    check = ReservationCheck("my-proj", "us-central1-a", credentials=AnonymousCredentials(),
                             client_options={"api_endpoint": compute.url})  # fmt: skip
    job = TrainingJob(name="a", command=["x"], accelerator=Accelerator("h100-mega", count=8),
                      reservation="projects/owner-proj/reservations/h100-res")  # fmt: skip
    reservation = job_reservation(job)
    assert reservation is not None and check.machine_type(reservation) == "a3-highgpu-8g"
    with pytest.raises(SpecError, match=r"holds a3-highgpu-8g VMs, not a3-megagpu-8g"):
        check.check(reservation, job.accelerator)
    check.check(reservation, Accelerator("h100", count=8))  # the reservation's machine type
    with pytest.raises(ConfigError, match=r"does not exist in project my-proj"):
        check.machine_type(job_reservation(job.with_changes(reservation="other")))  # type: ignore[arg-type]
