"""`GpuNetworks`: the VPC networks and subnets of a GPUDirect capacity's extra NICs, created
through `google-cloud-compute` with the same operation polling as node pools, named as
`gkeml setup` names their GKE Network objects (`setup.gpudirect.vpc_names`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gkeml_sdk.errors import ConfigError, GkeError
from gkeml_sdk.setup.gpudirect import capacity_stack, is_rdma, vpc_names

if TYPE_CHECKING:
    from gkeml_sdk.setup.capacity_model import Capacity

# MTUs of GPU NIC networks (GKE "Maximize GPU network bandwidth" pages): gVNIC networks 8244,
# RDMA (RoCE) networks 8896 with the zone's RoCE network profile.
GVNIC_MTU, RDMA_MTU = 8244, 8896


class GpuNetworks:
    """Creates, in `project` and `region`, what `Capacity(gpudirect_vpc=PREFIX)` names: one
    custom-mode VPC per gVNIC and one RDMA VPC (in `zone`'s RoCE profile) with a subnet per
    NIC, skipping those that exist. `clients`: compute_v1 Networks, Subnetworks,
    GlobalOperations and RegionOperations clients (made with `client_options` otherwise).

    Example:
        >>> from gkeml_sdk import Accelerator, Capacity
        >>> nets = GpuNetworks("my-project", "us-central1", zone="us-central1-a")  # doctest: +SKIP
        >>> b200 = Capacity(accelerator=Accelerator("b200", count=8), gpudirect_vpc="gd")
        >>> nets.create(b200)[:2]  # doctest: +SKIP
        ['gd-gvnic-1', 'gd-rdma']
    """

    def __init__(
        self,
        project: str,
        region: str,
        *,
        zone: str | None = None,
        credentials: Any = None,
        client_options: dict[str, Any] | None = None,
        clients: tuple[Any, Any, Any, Any] | None = None,
        poll_seconds: float = 5.0,
        timeout_seconds: float = 1800.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.project, self.region, self.zone = project, region, zone
        if clients is None:
            from google.cloud import compute_v1

            kw: dict[str, Any] = {
                "credentials": credentials,
                "transport": "rest",
                "client_options": client_options,
            }
            clients = (
                compute_v1.NetworksClient(**kw),
                compute_v1.SubnetworksClient(**kw),
                compute_v1.GlobalOperationsClient(**kw),
                compute_v1.RegionOperationsClient(**kw),
            )
        self.networks: Any = clients[0]
        self.subnetworks: Any = clients[1]
        self.global_ops: Any = clients[2]
        self.region_ops: Any = clients[3]
        self.poll_seconds, self.timeout_seconds, self._sleep = poll_seconds, timeout_seconds, sleep

    def create(self, capacity: Capacity) -> list[str]:
        """Create the capacity's missing VPCs, then subnets; returns the names created."""
        from google.api_core import exceptions as api
        from google.cloud import compute_v1

        stack = capacity_stack(capacity)
        if stack is None or capacity.gpudirect_vpc is None:
            raise ConfigError(
                f"capacity {capacity.name!r} names no GPUDirect VPCs to create: give it "
                "gpudirect_vpc='PREFIX' (A3, A4 or A4X GPUs), or let node pools bring the "
                "networks up with accelerator_network_profile='auto'"
            )
        created: list[str] = []
        triples = vpc_names(stack, capacity.gpudirect_vpc)
        for vpc in dict.fromkeys(v for _, v, _ in triples):
            rdma = any(is_rdma(name) for name, v, _ in triples if v == vpc)
            try:
                self.networks.get(project=self.project, network=vpc)
                continue
            except api.NotFound:
                pass
            network = compute_v1.Network(name=vpc, auto_create_subnetworks=False,
                                         mtu=RDMA_MTU if rdma else GVNIC_MTU)  # fmt: skip
            if rdma:
                if self.zone is None:
                    raise ConfigError(
                        f"the RDMA network {vpc} lives in one zone's RoCE network profile: "
                        "pass GpuNetworks(..., zone='ZONE') (the zone of the node pool)"
                    )
                network.network_profile = (
                    f"projects/{self.project}/global/networkProfiles/{self.zone}-vpc-roce"
                )
            op = self.networks.insert_unary(project=self.project, network_resource=network)
            self._wait(f"create network {vpc}", op, self.global_ops, {})
            created.append(vpc)
        for i, (_, vpc, subnet) in enumerate(triples):
            try:
                self.subnetworks.get(project=self.project, region=self.region, subnetwork=subnet)
                continue
            except api.NotFound:
                pass
            resource = compute_v1.Subnetwork(
                name=subnet,
                network=f"projects/{self.project}/global/networks/{vpc}",
                ip_cidr_range=f"192.168.{i}.0/24",
                region=self.region,
            )
            op = self.subnetworks.insert_unary(
                project=self.project, region=self.region, subnetwork_resource=resource
            )
            self._wait(f"create subnet {subnet}", op, self.region_ops, {"region": self.region})
            created.append(subnet)
        return created

    def _wait(self, action: str, op: Any, operations: Any, where: dict[str, str]) -> None:
        from google.cloud import compute_v1

        waited = 0.0  # counted in poll intervals, so a test's sleep() decides the time
        while op.status != compute_v1.Operation.Status.DONE:
            if waited >= self.timeout_seconds:
                raise GkeError(action, reason="TIMEOUT", message=f"operation {op.name} not done")
            self._sleep(self.poll_seconds)
            waited += self.poll_seconds
            op = operations.get(project=self.project, operation=op.name, **where)
        errors = list(op.error.errors) if op.error else []
        if errors:
            raise GkeError(action, reason=errors[0].code, message=errors[0].message)
