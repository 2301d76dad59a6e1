"""How a `ServeModel`'s replicas run: how many (`Autoscaling`), on which capacity (`SpotMix`),
and how `ServeHandle.update()` moves them to a new version (`Rollout`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gkeml_sdk.core.model import SpecModel, fail

# Google's samples target 5-10 waiting requests per pod; its guide suggests starting at 3-5.
DEFAULT_QUEUE_DEPTH = 5.0
MAX_STABILIZATION_SECONDS = 3600  # HPA behavior limit
# HPA targets are Kubernetes quantities, written in milli-units: a smaller target would be
# written as 0 (refused rather than rounded up, which would silently change it).
MIN_TARGET = 0.001
MAX_TARGET = 1_000_000.0  # far above any engine's queue; keeps the quantity a plain integer

CAPACITY_LABEL = "gkeml.dev/capacity"  # which part of a SpotMix a pod belongs to
SPOT_SUFFIX = "-spot"  # the Spot part's Deployment; the on-demand floor keeps the service name

CANARY_SUFFIX = "-canary"
# The Deployment's own progress deadline margin: a pod that loads weights longer than its
# start-up budget is broken, not slow.
DEADLINE_MARGIN_SECONDS = 300


class Autoscaling(SpecModel):
    """Replica bounds and the per-replica target of a HorizontalPodAutoscaler, or, with
    `min=0`, of a KEDA ScaledObject that scales to zero when idle.

    The signal is the engine's queue depth or batch size, read through the GKE custom metrics
    path (GKE's "Best practices for autoscaling large language model (LLM) inference workloads
    with GPUs"). `queue_depth` (waiting requests per replica) suits throughput and cost;
    `batch_size` (running requests per replica) suits latency-sensitive services. Set one; with
    neither, the target is a queue depth of 5.

    Example:
        >>> a = Autoscaling(min=1, max=4, queue_depth=5)
        >>> a.signal, a.target
        ('queue_depth', 5.0)
    """

    min: int = Field(1, description="Fewest replicas (0 scales to zero when idle).")
    max: int = Field(description="Most replicas.")
    queue_depth: float | None = Field(
        None, description="Target of waiting requests per replica (throughput and cost)."
    )
    batch_size: float | None = Field(
        None, description="Target of running requests per replica (latency-sensitive services)."
    )
    # Scale up at once (capacity permitting), down slowly: a removed replica costs minutes of
    # model loading to bring back.
    scale_up_pods_per_minute: int = Field(2, description="Replicas added per minute at most.")
    scale_down_delay_seconds: int = Field(
        600,
        description="Quiet time before a replica is removed (with min=0 also the idle time "
        "before going to zero).",
    )
    # KEDA queries Managed Prometheus through its frontend (GKE's "Query using Grafana" deploys
    # it).
    prometheus_address: str = Field(
        "http://frontend.gmp-public.svc:9090",
        description="Where KEDA reads the engine metrics (Google Managed Prometheus), for min=0.",
    )
    activation: float = Field(
        0.0, description="Metric value above which a server scaled to zero wakes up."
    )

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


class SpotMix(SpecModel):
    """`on_demand_min` replicas on on-demand nodes always run; the `ServeModel`'s `replicas`
    (a count or `Autoscaling`) size the Spot part on top of them, behind one Service
    (SkyServe's `base_ondemand_fallback_replicas`, on one GKE cluster).

    Example:
        >>> from gkeml_sdk import Accelerator, Autoscaling, ServeModel
        >>> svc = ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"), spot=SpotMix(on_demand_min=1),
        ...                  replicas=Autoscaling(min=1, max=6))
        >>> [o["metadata"]["name"] for o in svc.compile().of_kind("Deployment")]
        ['chat-spot', 'chat']
    """

    on_demand_min: int = Field(
        1, description="On-demand replicas that always run, whatever Spot capacity does."
    )

    @model_validator(mode="after")
    def _check(self) -> SpotMix:
        if self.on_demand_min < 1:
            raise fail(
                f"SpotMix(on_demand_min={self.on_demand_min})",
                rule="the mix keeps at least one on-demand replica; all-Spot is spot=True",
                fix="SpotMix(on_demand_min=1), or spot=True",
                field="spot",
            )
        return self

    def __bool__(self) -> bool:
        return True  # some replicas run on Spot: Spot notes and prices apply

    def __repr__(self) -> str:
        return f"SpotMix(on_demand_min={self.on_demand_min})"


class Rollout(SpecModel):
    """Rollout settings of a `ServeModel`; `update()` uses them.

    `strategy="surge"` replaces replicas one at a time (a new pod is ready before an old one
    leaves); `strategy="canary"` first runs `canary_replicas` of the new version behind
    `canary_weight` percent of the requests for `analysis_seconds`, then surges. Either way a
    version that is not ready within `ready_deadline_seconds` (default: the plan's start-up
    budget per replica replaced, plus 5 minutes) or fails the canary gate is rolled back to
    the last ready version, and the reason is recorded in the service's history. The state
    machine that drives it is `gkeml_sdk.serving.rollout_machine`.

    Example:
        >>> r = Rollout(strategy="canary", canary_weight=5, max_error_ratio=0.02)
        >>> r.strategy, r.canary_weight, r.max_latency_seconds
        ('canary', 5, None)
    """

    strategy: Literal["surge", "canary"] = Field(
        "surge",
        description='"surge" replaces replicas one at a time; "canary" runs the new version '
        "beside the old one behind a share of the requests first.",
    )
    ready_deadline_seconds: int | None = Field(
        None,
        description="How long the new version may take to be ready before it is rolled back "
        "(default: the plan's start-up budget per replica, plus 5 minutes).",
    )
    canary_weight: int = Field(
        10, description="Percent of the requests the canary receives (1 to 99)."
    )
    canary_replicas: int = Field(1, description="Replicas of the new version during the canary.")
    analysis_seconds: int = Field(
        300, description="How long the canary is watched before it is promoted."
    )
    max_error_ratio: float = Field(
        0.01,
        description="Failed requests over all the canary answered, above which it is rolled back.",
    )
    max_latency_seconds: float | None = Field(
        None,
        description="p95 end-to-end request latency above which the canary is rolled back "
        "(None: latency is not judged).",
    )
    min_requests: int = Field(
        20, description="A canary that answered fewer requests is not judged good."
    )

    @model_validator(mode="after")
    def _check(self) -> Rollout:
        if not 1 <= self.canary_weight <= 99:
            raise fail(
                f"canary_weight={self.canary_weight}",
                rule="a canary takes a share of the requests: 1 to 99 percent",
                fix="canary_weight=10",
                field="rollout",
            )
        for name in ("canary_replicas", "analysis_seconds", "min_requests"):
            if getattr(self, name) < 1:
                raise fail(f"Rollout {name}={getattr(self, name)}", fix=f"{name}=1 or more")
        if self.ready_deadline_seconds is not None and self.ready_deadline_seconds < 1:
            raise fail(
                f"ready_deadline_seconds={self.ready_deadline_seconds}",
                fix="leave it unset (the plan's start-up budget) or give seconds",
                field="rollout",
            )
        if not 0 <= self.max_error_ratio < 1:
            raise fail(f"max_error_ratio={self.max_error_ratio}", fix="max_error_ratio=0.01")
        if self.max_latency_seconds is not None and self.max_latency_seconds <= 0:
            raise fail(f"max_latency_seconds={self.max_latency_seconds}", fix="e.g. 30.0")
        return self

    def deadline_seconds(self, startup_seconds: int, replicas: int) -> int:
        """Seconds a new version has to become ready: the setting, or one start-up budget per
        replica replaced (they surge one at a time) plus a margin.

        Example:
            >>> Rollout().deadline_seconds(600, 2)
            1500
            >>> Rollout(ready_deadline_seconds=90).deadline_seconds(600, 2)
            90
        """
        if self.ready_deadline_seconds is not None:
            return self.ready_deadline_seconds
        return startup_seconds * max(replicas, 1) + DEADLINE_MARGIN_SECONDS
