"""The ephemeral storage GKE nodes offer pods (`scheduling.node_storage`), against the figures
GKE documents and the reservation rules it states."""

from __future__ import annotations

import pytest

from gkeml_sdk.scheduling.node_storage import (
    GIB,
    MAX_BOOT_DISK_GB,
    MIN_BOOT_DISK_GB,
    boot_disk_allocatable,
    boot_disk_for,
    bundled_local_ssds,
    local_ssd_allocatable,
    node_ephemeral_storage,
)


def test_the_default_boot_disk_offers_what_gke_documents_to_the_byte() -> None:
    # plan-node-sizes: a node of the default 100 GB boot disk, allocatable ephemeral-storage.
    assert boot_disk_allocatable() == boot_disk_allocatable(100) == 47060071478


def test_a_larger_boot_disk_keeps_at_most_100_gib_for_the_system() -> None:
    # Past 268 GiB the reservation stops at its 100 GiB cap: each further GiB of disk gives
    # pods 0.9 GiB less the filesystem's share (1.5635% plus 0.1% buffer up to 100 MiB).
    grown = boot_disk_allocatable(2000) - boot_disk_allocatable(1000)
    assert 0.88 * 1000 * GIB < grown < 0.9 * 1000 * GIB
    below_cap = boot_disk_allocatable(200) - boot_disk_allocatable(100)
    assert below_cap < 0.6 * 100 * GIB  # 35% of each GiB still goes to the reservation


def test_one_local_ssd_keeps_50_gib_for_the_system_and_10_percent_for_eviction() -> None:
    # 375 GiB less cluster-autoscaler's measured 7289472 KiB of filesystem overhead.
    capacity = 375 * GIB - 7289472 * 1024
    assert capacity == 395188764672
    # The kubelet's 10% is a float32 ratio: 589 bytes more than a tenth of this capacity.
    assert local_ssd_allocatable(1) == capacity - (capacity // 10 + 589) - 50 * GIB


def test_local_ssd_reservations_by_disk_count() -> None:
    two, three = local_ssd_allocatable(2), local_ssd_allocatable(3)
    # Two disks keep 75 GiB, three or more 100 GiB: the third disk adds less than a whole one.
    assert two - local_ssd_allocatable(1) > 0.9 * 375 * GIB - 25 * GIB - 7 * GIB
    assert three - two < 0.9 * 375 * GIB - 25 * GIB + 1 * GIB
    assert local_ssd_allocatable(0) == 0
    sizes = [local_ssd_allocatable(n) for n in (1, 2, 4, 8, 16, 24, 32)]
    assert sizes == sorted(sizes)
    assert round(local_ssd_allocatable(16) / GIB) == 5255


@pytest.mark.parametrize("needed", [1, 47060071478, 47060071479, 145 * GIB, 832 * GIB])
def test_boot_disk_for_is_the_smallest_disk_that_holds_it(needed: int) -> None:
    disk = boot_disk_for(needed)
    assert disk is not None
    assert boot_disk_allocatable(disk) >= needed
    assert disk == MIN_BOOT_DISK_GB or boot_disk_allocatable(disk - 1) < needed


def test_boot_disk_for_what_no_boot_disk_holds_is_none() -> None:
    assert boot_disk_for(boot_disk_allocatable(MAX_BOOT_DISK_GB) + 1) is None


def test_machines_with_local_ssds_are_the_catalogs() -> None:
    assert bundled_local_ssds("a2-ultragpu-8g") == 8
    assert bundled_local_ssds("a3-megagpu-8g") == 16
    assert bundled_local_ssds("a4-highgpu-8g") == 32
    assert bundled_local_ssds("g2-standard-96") == bundled_local_ssds("unknown") == 0


def test_a_pool_request_says_which_storage_its_nodes_offer() -> None:
    a3 = {"machineType": "a3-highgpu-8g"}
    assert node_ephemeral_storage(a3) == 47060071478  # no Local SSD config: the boot disk
    on_ssd = {**a3, "ephemeralStorageLocalSsdConfig": {"localSsdCount": 16}}
    assert node_ephemeral_storage(on_ssd) == local_ssd_allocatable(16)
    # A machine with a fixed set of disks takes all of them when the count is unset.
    assert node_ephemeral_storage({**a3, "ephemeralStorageLocalSsdConfig": {}}) == (
        local_ssd_allocatable(16)
    )
    assert node_ephemeral_storage({"machineType": "g2-standard-8", "diskSizeGb": 500}) == (
        boot_disk_allocatable(500)
    )
