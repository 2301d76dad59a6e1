"""What one inter-node networking stack of the catalog holds (`NetworkStack`): the pod's
extra interfaces, the receive-datapath daemon, host volumes, NCCL settings and the cluster
prerequisites. The rows are in `gkeml_sdk.hardware.network_stacks`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class HostVolume:
    """A node directory the stack mounts: into the app container at `app_path` (None: not
    there) and into the daemon at `daemon_path` (None: not there)."""

    name: str
    host_path: str
    app_path: str | None
    daemon_path: str | None = None


@dataclass(frozen=True, slots=True)
class Daemon:
    """The receive-datapath manager that runs next to the app (GPUDirect-TCPX/TCPXO)."""

    name: str
    image: str
    command: tuple[str, ...]
    capabilities: tuple[str, ...]
    devices: tuple[str, ...]  # host device files GKE's device injector gives the daemon


@dataclass(frozen=True, slots=True)
class NetworkStack:
    """One way GPUs of different nodes talk, with everything a pod needs for it.

    Example:
        >>> from gkeml_sdk.hardware.network_stacks import stack
        >>> s = stack("tcpxo")
        >>> s.display, s.gpudirect, s.networks[:2], s.daemon.name
        ('GPUDirect-TCPXO', True, ('vpc1', 'vpc2'), 'tcpxo-daemon')
    """

    key: str
    display: str
    gpudirect: bool
    # GKE Network names of eth1, eth2, ... (eth0 stays on the default network).
    networks: tuple[str, ...] = ()
    daemon: Daemon | None = None
    volumes: tuple[HostVolume, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    app_capabilities: tuple[str, ...] = ()
    node_labels: tuple[tuple[str, str], ...] = ()
    # Multi-node NVLink through an NVIDIA DRA ComputeDomain (IMEX channel per pod).
    compute_domain: bool = False
    # Cluster and node pool setup the pods rely on, one sentence each.
    prerequisites: tuple[str, ...] = ()
    # What the node pool request sets for the stack: GKE's GPUDirectConfig strategy (RDMA on
    # A3 Ultra and A4), NCCL Fast Socket (NodeConfig.fast_socket); every stack needs gVNIC.
    gpu_direct_strategy: str | None = None
    fast_socket: bool = False
    # GKE creates and attaches the extra networks itself for pools with
    # NodeNetworkConfig.accelerator_network_profile="auto" (XPK's
    # supports_accelerator_network_profile rows: A3 High and Mega, A3 Ultra, A4, A4X).
    network_profile: bool = False
    nccl_installer: str | None = None  # key of its row in hardware.nccl_installers

    @property
    def pool_networks(self) -> int:
        """Extra VPC networks (one per extra NIC) the node pool attaches."""
        return len(self.networks)

    def network_prerequisite(self, machine: str) -> str:
        """The networks sentence of the cluster prerequisites for `machine`."""
        modes = {n: "RDMA" if n.startswith("rdma") else "NetDevice" for n in self.networks}
        listed = ", ".join(f"{n} (deviceMode {m})" for n, m in modes.items())
        return (
            f"{self.display} on {machine}: one VPC and subnet per extra NIC, each with a "
            f"GKENetworkParamSet and a Network (networking.gke.io/v1, type Device) named "
            f"{listed}; node pool with --enable-gvnic and one --additional-node-network "
            "network=VPC,subnetwork=SUBNET per network"
        )
