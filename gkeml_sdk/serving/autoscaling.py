"""`Autoscaling`: how many replicas of a model server run, driven by the engine's queue depth
(or batch size) through the GKE custom metrics path (GKE's "Best practices for autoscaling
large language model (LLM) inference workloads with GPUs")."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from gkeml_sdk.core.model import SpecModel, fail

# Google's samples target 5-10 waiting requests per pod; its guide suggests starting at 3-5.
DEFAULT_QUEUE_DEPTH = 5.0
MAX_STABILIZATION_SECONDS = 3600  # HPA behavior limit
# HPA targets are Kubernetes quantities, written in milli-units: a smaller target would be
# written as 0 (refused rather than rounded up, which would silently change it).
MIN_TARGET = 0.001
MAX_TARGET = 1_000_000.0  # far above any engine's queue; keeps the quantity a plain integer


class Autoscaling(SpecModel):
    """Replica bounds and the per-replica target of a HorizontalPodAutoscaler, or, with
    `min=0`, of a KEDA ScaledObject that scales to zero when idle.

    `queue_depth` (waiting requests per replica) suits throughput and cost; `batch_size`
    (running requests per replica) suits latency-sensitive services. Set one; with neither,
    the target is a queue depth of 5.

    Example:
        >>> a = Autoscaling(min=1, max=4, queue_depth=5)
        >>> a.signal, a.target
        ('queue_depth', 5.0)

    Attributes:
        min: Fewest replicas (0 scales to zero when idle).
        max: Most replicas.
        queue_depth: Target of waiting requests per replica (throughput and cost).
        batch_size: Target of running requests per replica (latency-sensitive services).
        scale_up_pods_per_minute: Replicas added per minute at most.
        scale_down_delay_seconds: Quiet time before a replica is removed.
        prometheus_address: Where KEDA reads the engine metrics (Google Managed Prometheus).
        activation: Metric value above which a server scaled to zero wakes up.
    """

    min: int = 1
    max: int
    queue_depth: float | None = None
    batch_size: float | None = None
    # Scale up at once (capacity permitting), down slowly: a removed replica costs minutes of
    # model loading to bring back.
    scale_up_pods_per_minute: int = 2
    scale_down_delay_seconds: int = 600  # with min=0 also the idle time before going to zero
    # min=0: KEDA queries Managed Prometheus through its frontend (GKE's "Query using
    # Grafana" deploys it) and wakes the server when the signal exceeds `activation`.
    prometheus_address: str = "http://frontend.gmp-public.svc:9090"
    activation: float = 0.0

    @model_validator(mode="after")
    def _check(self) -> Autoscaling:
        if self.min < 0 or self.max < 1:
            raise fail(
                f"Autoscaling min={self.min}, max={self.max}",
                rule="replicas scale from min (0: to zero, through KEDA) up to max (at least 1)",
                fix="min=0 or more, max=1 or more; replicas=0 for a stopped service",
                field="min",
            )
        if self.min > self.max:
            raise fail(
                f"Autoscaling min={self.min} is above max={self.max}",
                rule="an HPA scales between minReplicas and maxReplicas",
                fix=f"min={self.max}, max={self.min}",
                field="min",
            )
        if self.queue_depth is not None and self.batch_size is not None:
            raise fail(
                f"Autoscaling sets both queue_depth={self.queue_depth} and "
                f"batch_size={self.batch_size}",
                rule="one signal drives scaling: waiting requests or running requests",
                fix="keep queue_depth for throughput/cost, or batch_size for latency",
            )
        for name in ("queue_depth", "batch_size"):
            value = getattr(self, name)
            if value is not None and not MIN_TARGET <= value <= MAX_TARGET:
                raise fail(
                    f"Autoscaling {name}={value}",
                    rule=f"the target is a positive average per replica, from {MIN_TARGET:g} "
                    f"(HPA quantities have milli-unit precision) to {MAX_TARGET:g}",
                    fix=f"{name}={DEFAULT_QUEUE_DEPTH:g}",
                    field=name,
                )
        if self.scale_up_pods_per_minute < 1:
            raise fail(
                f"scale_up_pods_per_minute={self.scale_up_pods_per_minute}",
                fix="scale_up_pods_per_minute=2",
            )
        if not 0 <= self.scale_down_delay_seconds <= MAX_STABILIZATION_SECONDS:
            raise fail(
                f"scale_down_delay_seconds={self.scale_down_delay_seconds}",
                rule=f"HPA stabilization windows are 0-{MAX_STABILIZATION_SECONDS} s",
                fix="scale_down_delay_seconds=600",
            )
        return self

    @property
    def to_zero(self) -> bool:
        """True when idle replicas scale to zero (a KEDA ScaledObject instead of an HPA)."""
        return self.min == 0

    @property
    def signal(self) -> Literal["queue_depth", "batch_size"]:
        """Which engine gauge drives scaling."""
        return "batch_size" if self.batch_size is not None else "queue_depth"

    @property
    def target(self) -> float:
        """Average value of the signal per replica that the HPA aims for."""
        if self.batch_size is not None:
            return self.batch_size
        return self.queue_depth if self.queue_depth is not None else DEFAULT_QUEUE_DEPTH

    def __repr__(self) -> str:
        return f"Autoscaling(min={self.min}, max={self.max}, {self.signal}={self.target:g})"

    __str__ = __repr__
