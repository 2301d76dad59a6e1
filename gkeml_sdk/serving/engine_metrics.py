"""What a canary answered, from the engine's Prometheus text exposition: success and failure
counters and a latency histogram summed over its pods, and the difference between two reads
as a `CanarySample` with the p95 latency interpolated from the buckets (as PromQL's
`histogram_quantile` does)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from gkeml_sdk.serving.engine_row import Metric, Outcomes
from gkeml_sdk.serving.rollout_machine import CanarySample

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
QUANTILE = 0.95


@dataclass(frozen=True)
class Totals:
    """Counters read at one moment, summed over pods."""

    success: float = 0.0
    failure: float = 0.0
    buckets: dict[float, float] = field(default_factory=dict)  # le -> cumulative count

    def __add__(self, other: Totals) -> Totals:
        buckets = dict(self.buckets)
        for le, count in other.buckets.items():
            buckets[le] = buckets.get(le, 0.0) + count
        return Totals(self.success + other.success, self.failure + other.failure, buckets)


def read_totals(text: str, outcomes: Outcomes) -> Totals:
    """The counters `outcomes` names in one /metrics answer.

    Example:
        >>> from gkeml_sdk.serving.catalog import engine
        >>> text = '''tgi_request_success 90
        ... tgi_request_failure 10
        ... tgi_request_duration_bucket{le="1.0"} 50
        ... tgi_request_duration_bucket{le="+Inf"} 100'''
        >>> t = read_totals(text, engine("tgi").outcomes)
        >>> t.success, t.failure, t.buckets[1.0]
        (90.0, 10.0, 50.0)
    """
    success = failure = 0.0
    buckets: dict[float, float] = {}
    bucket_name = f"{outcomes.latency}_bucket" if outcomes.latency else None
    for name, labels, value in _samples(text):
        if _matches(outcomes.success, name, labels):
            success += value
        elif _matches(outcomes.failure, name, labels):
            failure += value
        elif name == bucket_name and "le" in labels:
            le = float(labels["le"].replace("+Inf", "inf"))
            buckets[le] = buckets.get(le, 0.0) + value
    return Totals(success, failure, buckets)


def sample_between(before: Totals, after: Totals) -> CanarySample:
    """What was answered between two reads (a counter that went down restarted: counted from 0).

    Example:
        >>> before = Totals(10, 0, {1.0: 5, math.inf: 10})
        >>> after = Totals(100, 10, {1.0: 50, 2.0: 90, math.inf: 110})
        >>> s = sample_between(before, after)
        >>> s.requests, s.errors, round(s.latency_p95_seconds, 2)
        (100, 10, 2.0)
    """
    success = _delta(before.success, after.success)
    failure = _delta(before.failure, after.failure)
    buckets = {le: _delta(before.buckets.get(le, 0.0), n) for le, n in after.buckets.items()}
    return CanarySample(int(success + failure), int(failure), _quantile(buckets, QUANTILE))


def _quantile(buckets: dict[float, float], q: float) -> float | None:
    ordered = sorted(buckets.items())
    if not ordered or ordered[-1][1] <= 0:
        return None
    rank, lower, below = q * ordered[-1][1], 0.0, 0.0
    for le, count in ordered:
        if count >= rank:
            if math.isinf(le):
                return lower  # histogram_quantile answers the highest finite bound
            return lower + (le - lower) * (rank - below) / max(count - below, 1e-12)
        lower, below = le, count
    return lower


def _delta(before: float, after: float) -> float:
    return after - before if after >= before else after


def _matches(metric: Metric, name: str, labels: dict[str, str]) -> bool:
    return name == metric.name and all(labels.get(k) == v for k, v in metric.labels)


def _samples(text: str) -> Iterable[tuple[str, dict[str, str], float]]:
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        found = SAMPLE.match(line)
        if found is None:
            continue
        name, labels, value = found.groups()
        try:
            number = float(value)
        except ValueError:
            continue
        yield name, dict(LABEL.findall(labels or "")), number
