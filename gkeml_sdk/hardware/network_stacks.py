"""Inter-node GPU networking stacks on GKE, one row each: what a pod on a machine type with
that stack needs (extra interfaces, the receive-datapath daemon, host volumes, NCCL settings)
and what the cluster must have first. A machine type names its stack (`MachineType.network`).

Sources: https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx,
https://cloud.google.com/ai-hypercomputer/docs/create/gke-ai-hypercompute-custom (RDMA),
https://cloud.google.com/kubernetes-engine/docs/how-to/nccl-fast-socket, and the manifests of
github.com/GoogleCloudPlatform/container-engine-accelerators (gpudirect-tcpx, gpudirect-tcpxo,
gpudirect-rdma).
"""

from __future__ import annotations

from gkeml_sdk.core.lookup import resolve
from gkeml_sdk.hardware.gpus import GPUS
from gkeml_sdk.hardware.network_row import Daemon, HostVolume, NetworkStack

# Host paths GKE's driver installer and the NCCL plugin installers write to.
NVIDIA_HOST = "/home/kubernetes/bin/nvidia"
GIB_HOST = "/home/kubernetes/bin/gib"
NVIDIA_DEVICES = (*(f"/dev/nvidia{i}" for i in range(8)), "/dev/nvidiactl", "/dev/nvidia-uvm")
_CLUSTER = "cluster created with --enable-dataplane-v2 --enable-ip-alias --enable-multi-networking"
_CHUNKS = (
    ("NCCL_DYNAMIC_CHUNK_SIZE", "524288"),
    ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
    ("NCCL_P2P_PCI_CHUNKSIZE", "524288"),
    ("NCCL_P2P_NVL_CHUNKSIZE", "1048576"),
)


def _tcp_direct(key: str, display: str, nics: int, daemon: Daemon, **extra: object) -> NetworkStack:
    return NetworkStack(
        key=key,
        display=display,
        gpudirect=True,
        networks=tuple(f"vpc{i}" for i in range(1, nics + 1)),
        daemon=daemon,
        network_profile=True,
        nccl_installer=key,
        **extra,  # type: ignore[arg-type]
    )


_SYS = (
    HostVolume("sys", "/sys", None, "/hostsysfs"),
    HostVolume("proc-sys", "/proc/sys", None, "/hostprocsysfs"),
)
_TCPX_IFACES = ",".join(f"eth{i}" for i in range(1, 5))
_TCPXO_IFACES = ",".join(f"eth{i}" for i in range(1, 9))

_SOCKET_STACKS = (
    NetworkStack(
        key="fast-socket",
        display="NCCL Fast Socket",
        gpudirect=False,
        node_labels=(("cloud.google.com/gke-nccl-fastsocket", "true"),),
        fast_socket=True,
        prerequisites=(
            "GPU node pool created with --enable-fast-socket --enable-gvnic "
            "on a Container-Optimized OS image, GKE 1.25.2-gke.1700 or later (Autopilot: "
            "1.30.2-gke.1023000 or later)",
        ),
    ),
    _tcp_direct(
        "tcpx",
        "GPUDirect-TCPX",
        4,
        Daemon(
            "tcpx-daemon",
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12",
            (
                "/tcpgpudmarxd/build/app/tcpgpudmarxd",
                "--gpu_nic_preset",
                "a3vm",
                "--gpu_shmem_type",
                "fd",
                "--uds_path",
                "/run/tcpx",
                "--setup_param",
                "--verbose 128 2 0",
            ),
            ("NET_ADMIN",),
            NVIDIA_DEVICES,
        ),
        volumes=(
            HostVolume(
                "nvidia-libs",
                f"{NVIDIA_HOST}/lib64",
                "/usr/local/nvidia/lib64",
                "/usr/local/nvidia/lib64",
            ),
            HostVolume("tcpx-socket", "/run/tcpx", "/tmp", "/run/tcpx"),
            *_SYS,
        ),
        env=(
            ("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),
            ("NCCL_SOCKET_IFNAME", "eth0"),
            ("NCCL_GPUDIRECTTCPX_CTRL_DEV", "eth0"),
            ("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", _TCPX_IFACES),
            ("NCCL_CROSS_NIC", "0"),
            ("NCCL_ALGO", "Ring"),
            ("NCCL_PROTO", "Simple"),
            ("NCCL_NSOCKS_PERTHREAD", "4"),
            ("NCCL_SOCKET_NTHREADS", "1"),
            ("NCCL_NET_GDR_LEVEL", "PIX"),
            ("NCCL_P2P_PXN_LEVEL", "0"),
            *_CHUNKS,
            ("NCCL_BUFFSIZE", "4194304"),
            ("NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX", "/tmp"),
            ("NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS", "500000"),
            (
                "NCCL_GPUDIRECTTCPX_TX_BINDINGS",
                "eth1:8-21,112-125;eth2:8-21,112-125;eth3:60-73,164-177;eth4:60-73,164-177",
            ),
            (
                "NCCL_GPUDIRECTTCPX_RX_BINDINGS",
                "eth1:22-35,126-139;eth2:22-35,126-139;eth3:74-87,178-191;eth4:74-87,178-191",
            ),
        ),
        app_capabilities=("IPC_LOCK",),
        prerequisites=(
            _CLUSTER,
            "the NCCL TCPX plugin installer DaemonSet (container-engine-accelerators "
            "gpudirect-tcpx/nccl-tcpx-installer.yaml) and the NRI device injector; "
            "GKE 1.27.7-gke.1121000 or later",
        ),
    ),
    _tcp_direct(
        "tcpxo",
        "GPUDirect-TCPXO",
        8,
        Daemon(
            "tcpxo-daemon",
            "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21",
            (
                "/fts/entrypoint_rxdm_container.sh",
                "--num_hops=2",
                "--num_nics=8",
                "--uid=",
                "--alsologtostderr",
            ),
            ("NET_ADMIN", "NET_BIND_SERVICE"),
            (*NVIDIA_DEVICES, "/dev/dmabuf_import_helper"),
        ),
        volumes=(
            HostVolume("nvidia", NVIDIA_HOST, "/usr/local/nvidia", "/usr/local/nvidia"),
            HostVolume("aperture-devices", "/dev/aperture_devices", "/dev/aperture_devices"),
            *_SYS,
        ),
        env=(
            ("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),
            ("NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", "/dev/aperture_devices"),
            ("NCCL_FASTRAK_CTRL_DEV", "eth0"),
            ("NCCL_FASTRAK_IFNAME", _TCPXO_IFACES),
            ("NCCL_SOCKET_IFNAME", "eth0"),
            ("NCCL_CROSS_NIC", "0"),
            ("NCCL_PROTO", "Simple,LL128"),
            ("NCCL_MIN_NCHANNELS", "4"),
            ("NCCL_TUNER_PLUGIN", "libnccl-tuner.so"),
            ("NCCL_TUNER_CONFIG_PATH", "/usr/local/nvidia/lib64/a3plus_tuner_config.textproto"),
            (
                "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE",
                "/usr/local/nvidia/lib64/a3plus_guest_config.textproto",
            ),
            *_CHUNKS,
            ("NCCL_FASTRAK_NUM_FLOWS", "2"),
            ("NCCL_FASTRAK_USE_SNAP", "1"),
            ("NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS", "600000"),
            ("NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL", "0"),
            ("NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING", "0"),
            ("NCCL_FASTRAK_USE_LLCM", "1"),
            ("NCCL_BUFFSIZE", "8388608"),
            ("NCCL_NET_GDR_LEVEL", "PIX"),
            ("NCCL_NVLS_ENABLE", "0"),
        ),
        prerequisites=(
            _CLUSTER,
            "the NCCL TCPXO plugin installer DaemonSet (container-engine-accelerators "
            "gpudirect-tcpxo/nccl-tcpxo-installer.yaml) and the NRI device injector; the "
            "tcpxo-daemon image version must match the installed plugin; GKE "
            "1.28.9-gke.1250000 or later",
        ),
    ),
)


def _rdma(key: str, nics: int, tuner: str | None, installer: str, **extra: object) -> NetworkStack:
    # Values of the gIB plugin's set_nccl_env.sh, set as variables: the user's command runs
    # as given, never wrapped in a shell that sources a script.
    env = [
        ("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64:/usr/local/gib/lib64"),
        ("NCCL_NET", "gIB"),
        ("NCCL_CROSS_NIC", "0"),
        ("NCCL_NET_GDR_LEVEL", "PIX"),
        ("NCCL_P2P_NET_CHUNKSIZE", "131072"),
        ("NCCL_NVLS_CHUNKSIZE", "524288"),
        ("NCCL_IB_ADAPTIVE_ROUTING", "1"),
        ("NCCL_IB_QPS_PER_CONNECTION", "4"),
        ("NCCL_IB_TC", "52"),
        ("NCCL_IB_FIFO_TC", "84"),
    ]
    if tuner:
        env.append(("NCCL_TUNER_CONFIG_PATH", f"/usr/local/gib/configs/{tuner}"))
    return NetworkStack(
        key=key,
        display="GPUDirect-RDMA",
        gpudirect=True,
        networks=("gvnic-1", *(f"rdma-{i}" for i in range(nics))),
        network_profile=True,
        volumes=(
            HostVolume("nvidia", NVIDIA_HOST, "/usr/local/nvidia"),
            HostVolume("gib", GIB_HOST, "/usr/local/gib"),
        ),
        env=tuple(env),
        prerequisites=(
            _CLUSTER,
            f"the gIB NCCL plugin installer DaemonSet (container-engine-accelerators "
            f"gpudirect-rdma/{installer}); node pool with one gVNIC VPC and one RDMA VPC with "
            f"{nics} subnets",
        ),
        **extra,  # type: ignore[arg-type]
    )


STACKS: tuple[NetworkStack, ...] = (
    *_SOCKET_STACKS,
    # GKE's GPUDirectConfig strategy RDMA is for A3 Ultra and A4 (container API reference,
    # GPUDirectConfig.GPUDirectStrategy); A4X pools attach the RDMA networks without it.
    _rdma(
        "rdma-a3u",
        8,
        "tuner_config_a3u.txtpb",
        "nccl-rdma-installer.yaml",
        gpu_direct_strategy="RDMA",
        nccl_installer="rdma",  # A3 Ultra and A4 share the gIB plugin installer
    ),
    _rdma(
        "rdma-a4",
        8,
        "tuner_config_a4.txtpb",
        "nccl-rdma-installer.yaml",
        gpu_direct_strategy="RDMA",
        nccl_installer="rdma",
    ),
    _rdma(
        "rdma-a4x",
        4,
        None,
        "nccl-rdma-installer-a4x.yaml",
        compute_domain=True,
        nccl_installer="rdma-a4x",
    ),
)
_BY_KEY = {s.key: s for s in STACKS}


def machine_stack(machine_type: str) -> NetworkStack | None:
    """The networking stack GPU machine type `machine_type` offers, None for plain networking.

    Example:
        >>> machine_stack("a3-megagpu-8g").pool_networks, machine_stack("ct5lp-hightpu-4t")
        (8, None)
    """
    keys = {m.name: m.network for g in GPUS for m in g.machine_types}
    key = keys.get(machine_type)
    return stack(key) if key else None


def stack(key: str) -> NetworkStack:
    """The networking stack called `key` (a `MachineType.network` value).

    Example:
        >>> stack("rdma-a4").networks[:3]
        ('gvnic-1', 'rdma-0', 'rdma-1')
    """
    return _BY_KEY.get(key) or resolve("network stack", key, _BY_KEY, list(_BY_KEY))
