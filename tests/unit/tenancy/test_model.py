"""Tenant spec: tier defaults and overrides, isolation per tier, weights, replicas, quota."""

from __future__ import annotations

from pathlib import Path

import pytest

from gkeml_sdk import (
    Accelerator,
    ServeModel,
    SpecError,
    Tenant,
    TenantModel,
    Tier,
    compile_tenants,
    load_specs,
)
from gkeml_sdk.tenancy.model_servers import primary_model

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tenants.yaml"


def llama(**kw: object) -> ServeModel:
    fields: dict[str, object] = {
        "name": "llama-2-7b",
        "model": "llama-2-7b",
        "accelerator": Accelerator("l4"),
        "hf_token_secret": "hf",
    }
    return ServeModel(**{**fields, **kw})


def tenant(tier: object = "A", quota: int = 16, **model_kw: object) -> Tenant:
    serve = model_kw.pop("serve", None) or llama()
    extra = {k: model_kw.pop(k) for k in ("routing", "gateway_cidrs", "weight_sources")
             if k in model_kw}  # fmt: skip
    extra.setdefault("weight_sources", ["10.0.0.0/24"])  # the Hub, through an egress proxy
    fields = {"weight": 100, "min_replicas": 3, "max_replicas": 10, **model_kw}
    return Tenant(
        name="tenant-a",
        tier=tier,
        gpu_quota=quota,
        models=[TenantModel(model=serve, **fields)],
        **extra,
    )


def test_named_tiers_carry_the_product_defaults() -> None:
    rows = {
        name: (t.isolation, t.standbys, t.standby_level, t.rto_seconds, t.recovery_priority)
        for name in "ABC"
        for t in [Tier(name=name)]
    }
    assert rows == {
        "A": ("exclusive", 2, "hot", 5.0, 3),
        "B": ("shared", 1, "warm", 30.0, 2),
        "C": ("preemptible", 0, "cold", 300.0, 1),
    }


def test_a_tier_is_overridable_and_a_new_name_starts_from_like() -> None:
    assert Tier(name="A", standbys=4).standbys == 4
    gold = Tier(name="gold", like="A", rto_seconds=2)
    assert (gold.isolation, gold.standbys, gold.rto_seconds) == ("exclusive", 2, 2)
    with pytest.raises(SpecError, match=r"like='A'"):
        Tier(name="gold")


def test_tier_a_refuses_shared_gpus() -> None:
    mig = llama(accelerator=Accelerator("a100-40gb", mig="3g.20gb"), max_model_len=2048)
    with pytest.raises(SpecError, match=r"mig='3g.20gb' shares a GPU.*without mig/sharing"):
        tenant("A", serve=mig)


def test_tier_b_needs_mig_or_sharing() -> None:
    with pytest.raises(SpecError, match=r"whole GPUs on a shared tier.*a MIG slice"):
        tenant("B", min_replicas=1)
    mig = llama(accelerator=Accelerator("a100-40gb", mig="3g.20gb"), max_model_len=2048)
    assert tenant("B", serve=mig, min_replicas=1).tier.isolation == "shared"


def test_tier_c_needs_spot_or_a_preemptible_priority() -> None:
    high = Tier(name="C", priority=50_000)
    with pytest.raises(SpecError, match=r"neither Spot nor a preemptible priority.*spot=True"):
        tenant(high, min_replicas=1)
    assert tenant(high, serve=llama(spot=True), min_replicas=1).tier.priority == 50_000
    assert tenant("C", min_replicas=1).tier.preemptible


def test_warm_standbys_need_an_engine_that_sleeps() -> None:
    mig = llama(
        engine="tgi", accelerator=Accelerator("a100-40gb", mig="3g.20gb"), max_model_len=2048
    )
    with pytest.raises(SpecError, match=r"cannot keep a warm standby asleep.*engine='vllm'"):
        tenant("B", serve=mig, min_replicas=1)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"weight": 0}, "weight=0.*weight=1 or more"),
        ({"min_replicas": 0}, "min_replicas=0.*min_replicas=1"),
        ({"min_replicas": 4, "max_replicas": 2}, "max_replicas=2 is below.*max_replicas=4"),
    ],
)
def test_weights_and_replicas(fields: dict[str, int], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        tenant(**fields)


def test_a_serve_model_replica_count_must_agree() -> None:
    with pytest.raises(SpecError, match=r"disagree.*drop replicas"):
        tenant(serve=llama(replicas=2))


def test_quota_covers_min_replicas_and_standbys() -> None:
    # 3 minimum replicas + 2 hot standbys, one L4 each.
    assert tenant(quota=5).reserved_gpus == 5
    with pytest.raises(SpecError, match=r"gpu_quota=4 is below the 5 GPUs.*\(3 \+ 2\) x 1"):
        tenant(quota=4)
    # A cold tier reserves one replica's GPUs with a placeholder.
    assert tenant("C", quota=2, min_replicas=1).reserved_gpus == 2


def test_the_example_file_loads_the_three_tenants_and_round_trips() -> None:
    tenants = load_specs(EXAMPLE)
    assert [(t.name, t.tier.name) for t in tenants] == [
        ("tenant-a", "A"),
        ("tenant-b", "B"),
        ("tenant-c", "C"),
    ]
    a = tenants[0]
    assert [(m.name, m.weight, m.min_replicas, m.max_replicas) for m in a.models] == [
        ("llama-2-7b", 100, 3, 10),
        ("mistral-7b", 50, 1, 5),
    ]
    b = tenants[1].models[0]
    assert (b.name, b.weight, b.min_replicas, b.max_replicas) == ("tiny-llama-1b", 80, 2, 8)
    for t in tenants:
        assert Tenant.from_yaml(t.to_yaml()) == t
        assert Tenant.model_validate(t.model_dump()) == t


def test_the_inference_gateway_needs_the_proxy_only_subnet() -> None:
    with pytest.raises(
        SpecError, match=r"without gateway_cidrs.*gateway_cidrs=\['10.129.0.0/23'\]"
    ):
        tenant(routing="inference-gateway")
    with pytest.raises(SpecError, match=r"'10.129.0.0/33' is not a CIDR range"):
        tenant(routing="inference-gateway", gateway_cidrs=["10.129.0.0/33"])
    with pytest.raises(SpecError, match=r"gateway_cidrs apply to routing='inference-gateway'"):
        tenant(gateway_cidrs=["10.129.0.0/23"])
    ok = tenant(routing="inference-gateway", gateway_cidrs=["10.129.0.0/23"])
    assert ok.gateway_cidrs == ["10.129.0.0/23"]


def test_hub_downloads_need_a_weight_source_the_egress_policy_lets_out() -> None:
    with pytest.raises(SpecError, match=r"llama-2-7b download.*Hugging Face Hub.*weight_sources="):
        tenant(weight_sources=[])
    notes = compile_tenants([tenant()]).notes
    assert any(
        n.startswith(
            "tenant-a/llama-2-7b: downloads its weights from the Hugging Face "
            "Hub over HTTPS through weight_sources 10.0.0.0/24"
        )
        for n in notes
    )


def test_compile_tenants_carries_every_model_note() -> None:
    tenants = load_specs(EXAMPLE)
    notes = compile_tenants(tenants).notes
    for t in tenants:
        for m in t.models:
            own = primary_model(t, m).compile().notes
            assert own and all(f"{t.name}/{m.name}: {n}" in notes for n in own)
