"""What accelerators at their ceilings need of the project's Compute Engine quotas: per
regional metric (`hardware.quota_metrics`) and GPUs across all regions. A node pool or a
setup's capacity is asked as a `QuotaAsk`; the quotas themselves are read by
`backends.gke.quotas.QuotaCheck`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gkeml_sdk.hardware.quota_metrics import GPUS_ALL_REGIONS, quota_metric


@dataclass(frozen=True, slots=True)
class QuotaAsk:
    """`units` GPUs (or TPU chips) of catalog key `key` that `name` (a node pool, a setup's
    capacity in one mode) may hold at once; `preemptible` for Spot and Dynamic Workload
    Scheduler VMs, which count against the preemptible metric.

    Example:
        >>> QuotaAsk("pool h100", "h100", gpu=True, preemptible=False, units=16).units
        16
    """

    name: str
    key: str
    gpu: bool
    preemptible: bool
    units: int


@dataclass(frozen=True, slots=True)
class QuotaNeed:
    """`amount` of `metric` (counting `unit`, e.g. "H100 GPUs") that `askers` need at once;
    `regional` is False for the project quota (GPUS_ALL_REGIONS)."""

    metric: str
    amount: int
    unit: str
    askers: tuple[str, ...]
    regional: bool = True


@dataclass(frozen=True, slots=True)
class QuotaNeeds:
    """Every quota the asks need, and a sentence per ask no known metric covers."""

    needs: tuple[QuotaNeed, ...]
    unchecked: tuple[str, ...]


def quota_needs(asks: Iterable[QuotaAsk]) -> QuotaNeeds:
    """The quotas `asks` need, summed per metric (pools of one model and kind draw on one
    quota), regional ones first.

    Example:
        >>> asks = [QuotaAsk("pool a", "h100", gpu=True, preemptible=False, units=16),
        ...         QuotaAsk("pool b", "h100", gpu=True, preemptible=True, units=8)]
        >>> [(n.metric, n.amount) for n in quota_needs(asks).needs]
        [('NVIDIA_H100_GPUS', 16), ('PREEMPTIBLE_NVIDIA_H100_GPUS', 8), ('GPUS_ALL_REGIONS', 24)]
    """
    amounts: dict[tuple[str, bool], int] = {}
    units: dict[str, str] = {GPUS_ALL_REGIONS: "GPUs"}
    askers: dict[tuple[str, bool], list[str]] = {}
    unchecked = []
    for ask in asks:
        row = quota_metric(ask.key)
        metric = row.metric(preemptible=ask.preemptible) if row else None
        if row is None or metric is None:
            unchecked.append(
                f"{ask.name}: no Compute Engine quota metric is known for {ask.key} here "
                "(google-cloud-compute's quota list names none): check IAM & Admin > Quotas"
            )
        else:
            units[metric] = f"{ask.key.upper()} {row.unit}"
            _add(amounts, askers, (metric, True), ask)
        if ask.gpu:
            _add(amounts, askers, (GPUS_ALL_REGIONS, False), ask)
    needs = [
        QuotaNeed(metric, amount, units[metric], tuple(askers[(metric, regional)]), regional)
        for (metric, regional), amount in amounts.items()
    ]
    # The project quota last: regional shortfalls are the ones to fix first.
    return QuotaNeeds(tuple(sorted(needs, key=lambda n: not n.regional)), tuple(unchecked))


def _add(
    amounts: dict[tuple[str, bool], int],
    askers: dict[tuple[str, bool], list[str]],
    key: tuple[str, bool],
    ask: QuotaAsk,
) -> None:
    amounts[key] = amounts.get(key, 0) + ask.units
    askers.setdefault(key, []).append(ask.name)
