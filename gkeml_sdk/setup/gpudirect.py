"""The in-cluster side of GPUDirect for a setup's capacities: the NCCL plugin installer
DaemonSet of each stack, and, for networks brought up by hand (`Capacity(gpudirect_vpc=...)`),
one GKENetworkParamSet and Network per extra NIC (https://cloud.google.com/kubernetes-engine/
docs/how-to/gpu-bandwidth-gpudirect-tcpx). With GKE's accelerator network profile ("auto", the
node pools' default) GKE creates the networks itself, so only the installers remain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.labels import sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.gpu_labels import ACCELERATOR_LABEL
from gkeml_sdk.hardware.manifests import NRI_SOCKET_DIR
from gkeml_sdk.hardware.nccl_installers import NcclInstaller, installer
from gkeml_sdk.hardware.network_row import NetworkStack
from gkeml_sdk.hardware.network_stacks import machine_stack

if TYPE_CHECKING:
    from gkeml_sdk.setup.capacity_model import Capacity
    from gkeml_sdk.setup.fields import ClusterSetupFields

ARCH_LABEL = "kubernetes.io/arch"
HOST_STEP_IMAGE = "ubuntu:24.04"  # only runs nsenter into the node's namespaces
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# GKE's NRI device injector: it enables NRI on the node and gives a container the host
# devices its pod's devices.gke.io/container.<name> annotation lists, which the TCPX and
# TCPXO daemons need (container-engine-accelerators nri_device_injector/, whose DaemonSet XPK's
# `cluster create` applies): privileged, host network and PID, /dev and /var/run/nri mounted.
DEVICE_INJECTOR = "device-injector"
DEVICE_INJECTOR_IMAGE = (
    "gcr.io/gke-release/nri-device-injector@sha256:"
    "6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970"
)


def capacity_stack(capacity: Capacity) -> NetworkStack | None:
    """The GPUDirect stack of a capacity's machine type, None without one."""
    stack = machine_stack(capacity.accelerator.pool_shape().machine_type)
    return stack if stack is not None and stack.gpudirect else None


def gpudirect_objects(setup: ClusterSetupFields) -> list[Obj]:
    """Network objects of capacities with hand-made VPCs, then one installer per stack.

    Example:
        >>> from gkeml_sdk import Accelerator, Capacity, ClusterSetup, Team
        >>> setup = ClusterSetup(capacity=[Capacity(accelerator=Accelerator("h100-mega",
        ...     count=8))], teams=[Team(name="a", quota={"h100-mega": 8})])
        >>> [(o["kind"], o["metadata"]["name"]) for o in gpudirect_objects(setup)]
        [('DaemonSet', 'nccl-tcpxo-installer'), ('DaemonSet', 'device-injector')]
    """
    objects: list[Obj] = []
    installers: dict[str, NcclInstaller] = {}
    for capacity in setup.capacity:
        stack = capacity_stack(capacity)
        if stack is None:
            continue
        if capacity.gpudirect_vpc is not None:
            # Capacities of one stack share its networks (the rules refuse two VPCs per name).
            objects += [
                o for o in network_objects(stack, capacity.gpudirect_vpc) if o not in objects
            ]
        if stack.nccl_installer is not None:
            row = installer(stack.nccl_installer)
            installers.setdefault(row.name, row)
    if setup.nccl_installers:
        objects += [installer_daemonset(row) for row in installers.values()]
    injected = sorted(
        {label for c, stack in _stacks(setup) if stack.daemon and stack.daemon.devices
         for label in _labels(c)}
    )  # fmt: skip
    if injected:
        objects.append(device_injector_daemonset(injected))
    return objects


def _stacks(setup: ClusterSetupFields) -> list[tuple[Capacity, NetworkStack]]:
    found = [(c, capacity_stack(c)) for c in setup.capacity]
    return [(c, s) for c, s in found if s is not None]


def _labels(capacity: Capacity) -> list[str]:
    return [v for k, v in capacity.accelerator.node_selector().items() if k == ACCELERATOR_LABEL]


def device_injector_daemonset(accelerators: list[str]) -> Obj:
    """GKE's NRI device injector on the nodes of `accelerators` (`gke-accelerator` values).

    Example:
        >>> ds = device_injector_daemonset(["nvidia-h100-80gb"])
        >>> ds["metadata"]["name"], ds["spec"]["template"]["spec"]["hostPID"]
        ('device-injector', True)
    """
    match = [{"key": ACCELERATOR_LABEL, "operator": "In", "values": accelerators}]
    host = {"dev": "/dev", "nri": NRI_SOCKET_DIR}
    container = {
        "name": DEVICE_INJECTOR,
        "image": DEVICE_INJECTOR_IMAGE,
        "resources": {"requests": {"cpu": "150m"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": n, "mountPath": p} for n, p in host.items()],
    }
    volumes = [{"name": n, "hostPath": {"path": p}} for n, p in host.items()]
    return _node_daemonset(DEVICE_INJECTOR, match, volumes, {"containers": [container]})


def vpc_names(stack: NetworkStack, prefix: str) -> list[tuple[str, str, str]]:
    """(network, VPC, subnet) of each extra NIC: one VPC per NIC, except RDMA's NICs, which
    share one RDMA VPC with a subnet each (GKE's A3 Ultra / A4 / A4X networking)."""
    return [
        (name, f"{prefix}-rdma" if is_rdma(name) else f"{prefix}-{name}", f"{prefix}-{name}")
        for name in stack.networks
    ]


def network_objects(stack: NetworkStack, prefix: str) -> list[Obj]:
    """A GKENetworkParamSet and a Network (type Device) per extra NIC of `stack`."""
    objects: list[Obj] = []
    for name, vpc, subnet in vpc_names(stack, prefix):
        params = {
            "vpc": vpc,
            "vpcSubnet": subnet,
            "deviceMode": "RDMA" if is_rdma(name) else "NetDevice",
        }
        objects.append(_gke("GKENetworkParamSet", name, params))
    for name in stack.networks:
        ref = {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": name}
        objects.append(_gke("Network", name, {"type": "Device", "parametersRef": ref}))
    return objects


def installer_daemonset(row: NcclInstaller) -> Obj:
    """The privileged DaemonSet that installs a stack's NCCL plugin on each of its nodes."""
    match = [{"key": ACCELERATOR_LABEL, "operator": "In", "values": list(row.accelerators)}]
    match.append({"key": ARCH_LABEL, "operator": "In", "values": [row.arch]})
    volumes = [{"name": f"host-{i}", "hostPath": {"path": host}} for i, (host, _) in
               enumerate(row.mounts)]  # fmt: skip
    mounts = [{"name": f"host-{i}", "mountPath": path} for i, (_, path) in enumerate(row.mounts)]
    privileged = {"privileged": True}
    init: list[Obj] = []
    if row.host_step:
        command = ["nsenter", "-at", "1", "--", "sh", "-c", row.host_step]
        init.append({"name": "host-setup", "image": HOST_STEP_IMAGE, "command": command,
                     "securityContext": privileged})  # fmt: skip
    init.append({"name": "install", "image": row.image, "command": ["/bin/sh", "-c"],
                 "args": [row.steps], "resources": {"requests": {"cpu": "150m"}},
                 "securityContext": privileged, "volumeMounts": mounts})  # fmt: skip
    containers = {"initContainers": init, "containers": [{"name": "pause", "image": PAUSE_IMAGE}]}
    return _node_daemonset(row.name, match, volumes, containers)


def _node_daemonset(name: str, match: list[Obj], volumes: list[Obj], containers: Obj) -> Obj:
    """A privileged, node-critical DaemonSet in kube-system on the nodes `match` selects, on
    the host's network and PID namespace, tolerating every taint (GPU nodes are tainted)."""
    labels = {"k8s-app": name}
    pod = {
        "priorityClassName": "system-node-critical",
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": match}]}}},
        "tolerations": [{"operator": "Exists"}],
        "hostNetwork": True,
        "hostPID": True,
        "volumes": volumes,
        **containers,
    }  # fmt: skip
    return {
        "apiVersion": kinds.APPS,
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system",
                     "labels": {**labels, **sdk_labels()}},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": labels}, "spec": pod},
        },
    }  # fmt: skip


def is_rdma(network: str) -> bool:
    """Whether GKE Network `network` of a stack row is an RDMA NIC's (rows name them
    rdma-<i>, gVNICs vpc<i> or gvnic-<i>)."""
    return network.startswith("rdma")


def _gke(kind: str, name: str, spec: Obj) -> Obj:
    metadata = {"name": name, "labels": sdk_labels()}
    return {"apiVersion": kinds.GKE_NETWORKING, "kind": kind, "metadata": metadata, "spec": spec}
