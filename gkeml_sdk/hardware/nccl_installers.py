"""The NCCL plugin installers GPUDirect nodes need, one row per stack: a privileged DaemonSet
that copies the plugin (and, for TCPXO, exposes the NICs' aperture devices) onto each node of
the stack's GPUs. Images, commands and host paths follow container-engine-accelerators'
gpudirect-tcpx/nccl-tcpx-installer.yaml, gpudirect-tcpxo/nccl-tcpxo-installer.yaml and
gpudirect-rdma/nccl-rdma-installer{,-a4x}.yaml; a stack's row names its installer."""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.core.lookup import resolve

_ENTRY = "/scripts/container_entry.sh install --install-nccl"
# TCPXO: the NICs' aperture regions (PCI id 1ae0:0084) bind-mounted under /dev/aperture_devices
# on the host, readable by the tcpxo-daemon's device list.
_APERTURES = (
    "mkdir -p /dev/aperture_devices; "
    "for bdf in $(lspci -D -d 1ae0:0084 | cut -d' ' -f1); do "
    "mkdir -p /dev/aperture_devices/$bdf; umount -R /dev/aperture_devices/$bdf 2>/dev/null; "
    "mount --bind $(readlink -f /sys/bus/pci/devices/$bdf) /dev/aperture_devices/$bdf; done; "
    "chmod -R a+r /dev/aperture_devices; chmod a+rw /dev/aperture_devices/*/resource* || true"
)


@dataclass(frozen=True)
class NcclInstaller:
    """One installer DaemonSet: its name, the image and shell steps of its init container,
    the host directories it writes (host path -> container path), the `gke-accelerator`
    values and CPU architecture of the nodes it runs on, and a host step run in the node's
    namespaces first (`host_step`, via nsenter), if any.

    Example:
        >>> installer("tcpxo").accelerators
        ('nvidia-h100-mega-80gb',)
    """

    key: str
    name: str
    image: str
    steps: str
    mounts: tuple[tuple[str, str], ...]
    accelerators: tuple[str, ...]
    arch: str = "amd64"
    host_step: str = ""


def _rdma(
    key: str, name: str, image: str, accelerators: tuple[str, ...], arch: str
) -> NcclInstaller:
    steps = (
        f"set -ex; {_ENTRY}; cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/"
        "lib64; cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib"
    )
    mounts = (
        ("/home/kubernetes/bin/nvidia/lib64", "/usr/local/home/kubernetes/bin/nvidia/lib64"),
        ("/home/kubernetes/bin/gib", "/usr/local/home/kubernetes/bin/gib"),
    )
    return NcclInstaller(key, name, image, steps, mounts, accelerators, arch)


INSTALLERS: tuple[NcclInstaller, ...] = (
    NcclInstaller(
        "tcpx",
        "nccl-tcpx-installer",
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",
        f"set -ex; {_ENTRY}",
        (("/var/lib", "/var/lib"),),
        ("nvidia-h100-80gb",),
        host_step="mount --bind /var/lib/tcpx /var/lib/tcpx && mount -o remount,exec /var/lib/tcpx",
    ),
    NcclInstaller(
        "tcpxo",
        "nccl-tcpxo-installer",
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",
        f"set -ex; {_ENTRY}; mkdir -p /usr/local/nvidia/lib64; "
        "cp -r /var/lib/tcpxo/lib64/. /usr/local/nvidia/lib64",
        (("/var/lib", "/var/lib"), ("/home/kubernetes/bin", "/usr/local")),
        ("nvidia-h100-mega-80gb",),
        host_step=_APERTURES,
    ),
    _rdma(
        "rdma",
        "nccl-rdma-installer",
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.0.6",
        ("nvidia-h200-141gb", "nvidia-b200"),
        "amd64",
    ),
    _rdma(
        "rdma-a4x",
        "nccl-rdma-installer-a4x",
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-arm64:v1.0.4",
        ("nvidia-gb200",),
        "arm64",
    ),
)
_BY_KEY = {i.key: i for i in INSTALLERS}


def installer(key: str) -> NcclInstaller:
    """The installer row called `key`."""
    return _BY_KEY.get(key) or resolve("NCCL installer", key, _BY_KEY, list(_BY_KEY))
