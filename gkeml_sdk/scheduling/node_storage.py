"""How much local ephemeral storage (emptyDir volumes, container layers and logs) one GKE node
offers pods, from its node pool request: GKE backs it with the boot disk, or with the machine's
Local SSDs when the pool sets `ephemeralStorageLocalSsdConfig`, and keeps part of it for the
system and the kubelet's eviction threshold.

Sources (read 2026-12-07):
- GKE "About GKE node sizing", local ephemeral storage reservation
  (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes): the eviction
  threshold is 10% of the filesystem; the system reservation is, on the boot disk,
  min(50% of the disk, 6 GiB + 35% of the disk, 100 GiB) and, on Local SSDs, 50 GiB for one
  disk, 75 GiB for two and 100 GiB for three or more. Its example node of the default 100 GB
  boot disk reports capacity 98831908Ki and allocatable 47060071478, which this model
  reproduces to the byte (the kubelet takes the 10% as a float32 ratio).
- The filesystem a disk leaves for ephemeral storage: for boot disks other than 100 GB,
  cluster-autoscaler's estimate of what Container-Optimized OS takes
  (cloudprovider/gce/reserved.go `CalculateOSReservedEphemeralStorage`); for Local SSDs, its
  measurements of N x 375 GiB minus the node's capacity on GKE
  (`ephemeralStorageOnLocalSSDFilesystemOverheadInKiBByOSAndDiskCount`, COS), per disk count
  measured; counts past 24 take the 24-disk overhead per disk.
- `NodeConfig.disk_size_gb` (10 GB at least, 100 GB unset) and
  `EphemeralStorageLocalSsdConfig.local_ssd_count` (375 GB disks) of the GKE API; Compute
  Engine disk sizes are GiB ("GB" in its API)."""

from __future__ import annotations

import math

from gkeml_sdk.core.objects import ObjView
from gkeml_sdk.hardware.machines import machine_shape

GIB = 2**30
DEFAULT_BOOT_DISK_GB = 100  # GKE's disk_size_gb when a pool leaves it unset
MIN_BOOT_DISK_GB = 10
MAX_BOOT_DISK_GB = 65536  # the largest boot disk Compute Engine makes (64 TiB)
LOCAL_SSD_GIB = 375
# GKE's node label on nodes whose ephemeral storage is on Local SSDs.
LOCAL_SSD_EPHEMERAL_LABEL = "cloud.google.com/gke-ephemeral-storage-local-ssd"
# The kubelet's nodefs.available<10% threshold, as the float32 it parses it to.
_EVICTION_RATIO = 0.100000001490116119384765625
_DOCUMENTED_BOOT_GB, _DOCUMENTED_CAPACITY = 100, 98831908 * 1024
_LOCAL_SSD_OVERHEAD_KIB = {1: 7289472, 2: 13725224, 3: 20031312, 4: 26332924, 5: 32634536,
                           6: 38946604, 7: 45254008, 8: 51556096, 16: 52837800,
                           24: 78686620}  # fmt: skip
_LOCAL_SSD_RESERVED_GIB = {1: 50, 2: 75}  # three disks or more: 100


def _allocatable(capacity: int, reserved: int) -> int:
    return max(capacity - int(capacity * _EVICTION_RATIO) - reserved, 0)


def boot_disk_allocatable(disk_gb: int = DEFAULT_BOOT_DISK_GB) -> int:
    """Bytes of ephemeral storage pods may request on a node whose boot disk holds it.

    Example:
        >>> boot_disk_allocatable(100)
        47060071478
    """
    disk = disk_gb * GIB
    if disk_gb == _DOCUMENTED_BOOT_GB:
        capacity = _DOCUMENTED_CAPACITY
    else:
        # Container-Optimized OS's partitions, and the filesystem's over-provisioning buffer.
        os_part = math.ceil(0.015635 * disk) + math.ceil(4.148 * GIB)
        capacity = disk - os_part - min(100 * 2**20, math.ceil(0.001 * disk))
    reserved = min(disk // 2, 6 * GIB + math.ceil(0.35 * disk), 100 * GIB)
    return _allocatable(capacity, reserved)


def local_ssd_allocatable(disks: int) -> int:
    """Bytes of ephemeral storage pods may request on a node whose `disks` Local SSDs hold it.

    Example:
        >>> round(local_ssd_allocatable(16) / GIB)
        5255
    """
    if disks <= 0:
        return 0
    measured = disks if disks <= 8 else 16 if disks <= 16 else 24
    overhead = math.ceil(_LOCAL_SSD_OVERHEAD_KIB[measured] * max(disks, measured) / measured)
    capacity = disks * LOCAL_SSD_GIB * GIB - overhead * 1024
    return _allocatable(capacity, _LOCAL_SSD_RESERVED_GIB.get(disks, 100) * GIB)


def bundled_local_ssds(machine: str) -> int:
    """Local SSD disks a machine type comes with (A2 Ultra, A3, A4: the catalog's shapes).

    Example:
        >>> bundled_local_ssds("a3-highgpu-8g"), bundled_local_ssds("g2-standard-8")
        (16, 0)
    """
    shape = machine_shape(machine)
    return shape.local_ssd_gb // LOCAL_SSD_GIB if shape is not None else 0


def boot_disk_for(needed: int) -> int | None:
    """The smallest boot disk (GB) whose node offers pods `needed` bytes of ephemeral storage,
    or None when even the largest does not.

    Example:
        >>> boot_disk_for(145 * GIB)
        281
    """
    if boot_disk_allocatable(MAX_BOOT_DISK_GB) < needed:
        return None
    low, high = MIN_BOOT_DISK_GB, MAX_BOOT_DISK_GB
    while low < high:  # allocatable grows with the disk
        middle = (low + high) // 2
        if boot_disk_allocatable(middle) >= needed:
            high = middle
        else:
            low = middle + 1
    return low


def node_ephemeral_storage(config: ObjView) -> int:
    """Bytes of ephemeral storage pods may request on each node of a pool, from the request's
    `config` (a `NodeConfig` in the GKE API's JSON).

    Example:
        >>> node_ephemeral_storage({"machineType": "g2-standard-8", "diskSizeGb": 100})
        47060071478
    """
    local = config.get("ephemeralStorageLocalSsdConfig")
    if local is not None:
        # Machines with a fixed set of disks take all of them when the count is unset.
        disks = int(local.get("localSsdCount") or 0) or bundled_local_ssds(
            str(config.get("machineType") or "")
        )
        if disks:
            return local_ssd_allocatable(disks)
    return boot_disk_allocatable(int(config.get("diskSizeGb") or DEFAULT_BOOT_DISK_GB))
