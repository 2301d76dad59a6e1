"""The Compute Engine quota metrics each accelerator's VMs count against, as `regions.get`
lists them (`Region.quotas[].metric`), and the project-wide GPU quota (`projects.get`).

Where a name comes from: `enum` names appear in google-cloud-compute 1.57's
`compute_v1.Quota.Metric`; `3p` names are absent from that enum and are the ones public
third-party tools read from `regions.get` for the newer GPUs. Spot VMs and Dynamic Workload
Scheduler (flex-start, queued provisioning) use the preemptible metric (GKE "About
flex-start provisioning": preemptible quota). Rows with no metric are not checked, and
say so.
"""

from __future__ import annotations

from dataclasses import dataclass

# Project quota: GPUs of every model, in every region together (`projects.get`).
GPUS_ALL_REGIONS = "GPUS_ALL_REGIONS"


@dataclass(frozen=True, slots=True)
class QuotaMetric:
    """The regional quota metrics of one accelerator (catalog key), per capacity kind.

    Example:
        >>> quota_metric("h100").metric(preemptible=True)
        'PREEMPTIBLE_NVIDIA_H100_GPUS'
    """

    key: str
    standard: str | None
    preemptible: str | None
    unit: str  # what the quota counts: GPUs or TPU chips
    source: str  # "enum" or "3p" (module docstring)

    def metric(self, *, preemptible: bool) -> str | None:
        """The metric VMs of this kind count against; None when none is known."""
        return self.preemptible if preemptible else self.standard


def _gpu(key: str, family: str, source: str = "enum") -> QuotaMetric:
    return QuotaMetric(
        key, f"NVIDIA_{family}_GPUS", f"PREEMPTIBLE_NVIDIA_{family}_GPUS", "GPUs", source
    )


QUOTA_METRICS: tuple[QuotaMetric, ...] = (
    _gpu("t4", "T4"),
    _gpu("p4", "P4"),
    _gpu("v100", "V100"),
    _gpu("p100", "P100"),
    _gpu("l4", "L4"),
    _gpu("a100-40gb", "A100"),
    _gpu("a100-80gb", "A100_80GB"),
    # The enum has PREEMPTIBLE_ and COMMITTED_NVIDIA_H100_GPUS, not the on-demand name.
    QuotaMetric(
        "h100", "NVIDIA_H100_GPUS", "PREEMPTIBLE_NVIDIA_H100_GPUS", "GPUs", "enum (on-demand: 3p)"
    ),
    _gpu("h100-mega", "H100_MEGA", "3p"),
    _gpu("h200", "H200", "3p"),
    _gpu("b200", "B200", "3p"),
    # TPU quotas GKE's TPU pools use, in chips: the enum's podslice metrics.
    QuotaMetric(
        "v5e", "TPU_LITE_PODSLICE_V5", "PREEMPTIBLE_TPU_LITE_PODSLICE_V5", "TPU chips", "enum"
    ),
    QuotaMetric("v4", "TPU_PODSLICE_V4", "PREEMPTIBLE_TPU_PODSLICE_V4", "TPU chips", "enum"),
)
_BY_KEY = {row.key: row for row in QUOTA_METRICS}


def quota_metric(key: str) -> QuotaMetric | None:
    """The quota metrics of catalog key `key`, or None when no Compute metric is known (GB200,
    GB300, RTX PRO 6000; TPU v5p, v6e and TPU7x, whose quotas the enum does not name)."""
    return _BY_KEY.get(key)
