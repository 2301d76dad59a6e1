"""What a setup's capacities and node pools ask of Compute Engine quotas: whole nodes, in
what the quota counts (GPUs, TPU chips), per mode."""

from __future__ import annotations

from gkeml_sdk import Accelerator, Capacity, ClusterSetup, NodePool, Team, TpuSlice
from gkeml_sdk.hardware.quota_needs import QuotaAsk, quota_needs
from gkeml_sdk.nodepools.pool_quota import pool_quota_ask
from gkeml_sdk.setup.setup_quota import setup_quota_asks


def test_shared_gpus_and_slices_become_whole_machines_and_chips() -> None:
    mig = Accelerator("a100-40gb", mig="1g.5gb")  # 7 slices per GPU, 1 GPU per a2-highgpu-1g
    setup = ClusterSetup(
        capacity=[
            Capacity(accelerator=mig, provisioning=["standard", "flex-start"]),
            Capacity(accelerator=TpuSlice("v5e", "4x4"), provisioning=["spot"]),
            Capacity(accelerator=Accelerator("l4"), reservation="l4-res"),
        ],
        teams=[Team(name="a", quota={mig.capacity_name: 8, "v5e-4x4": 16, "l4": 4})],
    )
    asks = setup_quota_asks(setup)
    assert [(a.name, a.key, a.gpu, a.preemptible, a.units) for a in asks] == [
        ("capacity a100-40gb-1g-5gb (standard)", "a100-40gb", True, False, 2),
        ("capacity a100-40gb-1g-5gb (flex-start)", "a100-40gb", True, True, 2),
        ("capacity v5e-4x4 (spot)", "v5e", False, True, 16),
        ("capacity l4 (standard)", "l4", True, False, 4),  # the reservation mode asks none
    ]


def test_pools_ask_their_ceiling_over_every_slice() -> None:
    multislice = NodePool(name="v5e", hardware=TpuSlice("v5e", "4x4", slices=2), spot=True)
    assert pool_quota_ask(multislice) == QuotaAsk("pool v5e", "v5e", gpu=False,
                                                  preemptible=True, units=32)  # fmt: skip
    held = NodePool(name="held", hardware=Accelerator("h100", count=8), reservation="r")
    assert pool_quota_ask(held) is None
    needs = quota_needs([QuotaAsk("pool v5e", "v5e", gpu=False, preemptible=True, units=32)])
    assert [(n.metric, n.amount, n.unit) for n in needs.needs] == [
        ("PREEMPTIBLE_TPU_LITE_PODSLICE_V5", 32, "V5E TPU chips")
    ]
