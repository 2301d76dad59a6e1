"""Where a pool's nodes keep ephemeral storage (Local SSDs the machine comes with, or a boot
disk of `boot_disk_gb`), what the GKE request says of it, and a pool sized for what its pods
request (`NodePool.for_accelerator(..., ephemeral_storage=...)`), refused with the field when
it cannot hold it."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import Accelerator, NodePool, SpecError
from gkeml_sdk.backends.gke.messages import node_pool_messages
from gkeml_sdk.scheduling.node_storage import GIB, boot_disk_allocatable, local_ssd_allocatable


def _config(pool: NodePool) -> dict[str, Any]:
    (request,) = pool.to_dict()["nodePools"]
    return dict(request["config"])


def test_machines_with_local_ssds_keep_ephemeral_storage_on_all_of_them() -> None:
    pool = NodePool(name="h100", hardware=Accelerator("h100", count=8))
    assert _config(pool)["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 16}
    assert "diskSizeGb" not in _config(pool)
    assert pool.node_ephemeral_storage == local_ssd_allocatable(16)
    # The GKE client library reads the request as GKE's NodeConfig fields.
    (message,) = node_pool_messages(pool)
    assert message.config.ephemeral_storage_local_ssd_config.local_ssd_count == 16
    ultra = NodePool(name="a100", hardware=Accelerator("a100-80gb", count=2))
    assert _config(ultra)["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 2}


def test_other_machines_keep_it_on_a_boot_disk_of_the_size_asked() -> None:
    l4 = NodePool(name="l4", hardware=Accelerator("l4"))
    assert "ephemeralStorageLocalSsdConfig" not in _config(l4)
    assert "diskSizeGb" not in _config(l4)  # GKE's 100 GB
    assert l4.node_ephemeral_storage == 47060071478
    sized = NodePool(name="l4", hardware=Accelerator("l4"), boot_disk_gb=500)
    assert _config(sized)["diskSizeGb"] == 500
    (message,) = node_pool_messages(sized)
    assert message.config.disk_size_gb == 500
    assert sized.node_ephemeral_storage == boot_disk_allocatable(500)
    off = NodePool(name="h100", hardware=Accelerator("h100", count=8), local_ssd_ephemeral=False)
    assert "ephemeralStorageLocalSsdConfig" not in _config(off)
    assert off.node_ephemeral_storage == 47060071478


def test_a_pool_for_what_its_pods_request_gets_room_only_when_it_needs_it() -> None:
    l4 = Accelerator("l4", count=8)
    assert _config(NodePool.for_accelerator(l4, name="l4", ephemeral_storage="16Gi")) == (
        _config(NodePool.for_accelerator(l4, name="l4"))
    )
    sized = NodePool.for_accelerator(l4, name="l4", ephemeral_storage="832Gi", spot=True)
    assert (sized.boot_disk_gb, sized.spot) == (1057, True)  # the other options stay
    assert sized.node_ephemeral_storage >= 832 * GIB > boot_disk_allocatable(1056)
    # Sixteen Local SSDs hold it: the A3 pool is left as it is.
    h100 = NodePool.for_accelerator(
        Accelerator("h100", count=8), name="h100", ephemeral_storage="832Gi"
    )
    assert (h100.boot_disk_gb, h100.local_ssds) == (None, 16)
    # Two do not: the boot disk holds it instead.
    small = NodePool.for_accelerator(
        Accelerator("h100", count=1), name="h1", spot=True, ephemeral_storage="832Gi"
    )
    assert (small.boot_disk_gb, small.local_ssd_ephemeral, small.local_ssds) == (1057, False, 0)
    assert "ephemeralStorageLocalSsdConfig" not in _config(small)
    # Local SSDs turned off by the user: the boot disk is sized all the same.
    off = NodePool.for_accelerator(
        Accelerator("h100", count=8),
        name="h8",
        local_ssd_ephemeral=False,
        ephemeral_storage="145Gi",
    )
    assert (off.boot_disk_gb, off.local_ssd_ephemeral) == (281, False)


REFUSED: list[tuple[str, dict[str, Any], str, str]] = [
    # (what, for_accelerator options, the field named, a piece of the fix)
    ("a boot disk the user sized too small", {"boot_disk_gb": 200}, "boot_disk_gb",
     "drop boot_disk_gb"),
    ("Local SSDs the user chose, too few", {"local_ssd_ephemeral": True,
     "hardware": Accelerator("h100", count=1), "spot": True}, "local_ssd_ephemeral",
     "drop local_ssd_ephemeral"),
    ("more than any node holds", {"ephemeral_storage": "100Ti"}, "ephemeral_storage",
     "weights=HyperdiskML"),
    ("not a quantity", {"ephemeral_storage": "lots"}, "ephemeral_storage", ""),
]  # fmt: skip


@pytest.mark.parametrize(("what", "options", "field", "fix"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_pool_that_cannot_hold_what_its_pods_request_is_refused(
    what: str, options: dict[str, Any], field: str, fix: str
) -> None:
    options = {"hardware": Accelerator("l4", count=8), "ephemeral_storage": "832Gi", **options}
    hardware = options.pop("hardware")
    with pytest.raises(SpecError) as caught:
        NodePool.for_accelerator(hardware, name="pool", **options)
    assert caught.value.field == field, str(caught.value)
    assert fix in caught.value.fix and caught.value.rule


@pytest.mark.parametrize(
    ("fields", "field", "fix"),
    [
        ({"boot_disk_gb": 5}, "boot_disk_gb", "between 10 and 65536"),
        ({"boot_disk_gb": 70000}, "boot_disk_gb", "between 10 and 65536"),
        ({"local_ssd_ephemeral": True}, "local_ssd_ephemeral", "a3"),
    ],
)
def test_storage_fields_gke_refuses(fields: dict[str, Any], field: str, fix: str) -> None:
    with pytest.raises(SpecError) as caught:
        NodePool(name="l4", hardware=Accelerator("l4"), **fields)
    assert caught.value.field == field and fix in caught.value.fix, str(caught.value)
