"""GPUDirect networks brought up by `gkeml setup`: the NCCL plugin installer DaemonSet of each
capacity's stack and, for VPCs made by hand, a GKENetworkParamSet and Network per extra NIC."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Accelerator, Capacity, ClusterSetup, SpecError, Team
from tests.schemas import validate_object


def setup(*capacity: Capacity, **kw: Any) -> ClusterSetup:
    team = Team(name="a", quota={c.name: 8 for c in capacity})
    return ClusterSetup(capacity=list(capacity), teams=[team], **kw)


def of_kind(built: ClusterSetup, kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in built.compile().objects if o["kind"] == kind}


def test_each_stack_gets_its_installer_on_its_nodes_only() -> None:
    built = setup(
        Capacity(accelerator=Accelerator("h100", count=8)),
        Capacity(accelerator=Accelerator("h100-mega", count=8)),
        Capacity(accelerator=Accelerator("h200", count=8)),
        Capacity(accelerator=Accelerator("b200", count=8)),
        Capacity(accelerator=Accelerator("gb200", count=4)),
        Capacity(accelerator=Accelerator("l4")),
    )
    daemonsets = of_kind(built, "DaemonSet")
    assert list(daemonsets) == ["nccl-tcpx-installer", "nccl-tcpxo-installer",
                                "nccl-rdma-installer", "nccl-rdma-installer-a4x",
                                "device-injector"]  # fmt: skip
    for obj in daemonsets.values():
        validate_object(obj)

    def nodes(name: str) -> dict[str, list[str]]:
        pod = daemonsets[name]["spec"]["template"]["spec"]
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        return {e["key"]: e["values"] for e in terms["nodeSelectorTerms"][0]["matchExpressions"]}

    assert nodes("nccl-rdma-installer")["cloud.google.com/gke-accelerator"] == [
        "nvidia-h200-141gb",
        "nvidia-b200",
    ]
    assert nodes("nccl-rdma-installer-a4x")["kubernetes.io/arch"] == ["arm64"]
    # The TCPX and TCPXO daemons get their GPUs through GKE's NRI device injector.
    assert nodes("device-injector")["cloud.google.com/gke-accelerator"] == [
        "nvidia-h100-80gb",
        "nvidia-h100-mega-80gb",
    ]
    tcpxo = daemonsets["nccl-tcpxo-installer"]["spec"]["template"]["spec"]
    assert [c["name"] for c in tcpxo["initContainers"]] == ["host-setup", "install"]
    assert "/dev/aperture_devices" in tcpxo["initContainers"][0]["command"][-1]
    # Auto networks: GKE creates the Network objects, gkeml writes none.
    assert of_kind(built, "Network") == {}
    assert of_kind(setup(Capacity(accelerator=Accelerator("b200", count=8)),
                         nccl_installers=False), "DaemonSet") == {}  # fmt: skip


def test_hand_made_vpcs_get_a_network_per_nic() -> None:
    built = setup(Capacity(accelerator=Accelerator("b200", count=8), gpudirect_vpc="gd"))
    params = of_kind(built, "GKENetworkParamSet")
    networks = of_kind(built, "Network")
    for obj in [*params.values(), *networks.values()]:
        validate_object(obj)
    assert list(params) == ["gvnic-1", *(f"rdma-{i}" for i in range(8))]
    assert params["gvnic-1"]["spec"] == {"vpc": "gd-gvnic-1", "vpcSubnet": "gd-gvnic-1",
                                         "deviceMode": "NetDevice"}  # fmt: skip
    assert params["rdma-3"]["spec"] == {"vpc": "gd-rdma", "vpcSubnet": "gd-rdma-3",
                                        "deviceMode": "RDMA"}  # fmt: skip
    assert networks["rdma-3"]["spec"] == {
        "type": "Device",
        "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet",
                          "name": "rdma-3"},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("capacity", "message"),
    [
        ([Capacity(accelerator=Accelerator("l4"), gpudirect_vpc="gd")], "no GPUDirect NICs"),
        ([Capacity(accelerator=Accelerator("h100", count=8), gpudirect_vpc="one"),
          Capacity(accelerator=Accelerator("h100-mega", count=8), gpudirect_vpc="two")],
         "GKE Network 'vpc1' names two VPCs"),
    ],
)  # fmt: skip
def test_networks_gke_cannot_attach_are_refused(capacity: list[Capacity], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        setup(*capacity)
