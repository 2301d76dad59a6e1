"""`Rollout`: how `ServeHandle.update()` moves a running server to a new version (image, model
revision, engine args): a surge rollout gated on readiness, or a canary that takes a share of
the traffic through the routing weights and is judged on the engine's errors and latency.
The state machine that drives it is `gkeml_sdk.serving.rollout_machine`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import model_validator

from gkeml_sdk.core.model import SpecModel, fail

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel

CANARY_SUFFIX = "-canary"
# The Deployment's own progress deadline margin: a pod that loads weights longer than its
# start-up budget is broken, not slow.
DEADLINE_MARGIN_SECONDS = 300


class Rollout(SpecModel):
    """Rollout settings of a `ServeModel`; `update()` uses them.

    `strategy="surge"` replaces replicas one at a time (a new pod is ready before an old one
    leaves); `strategy="canary"` first runs `canary_replicas` of the new version behind
    `canary_weight` percent of the requests for `analysis_seconds`, then surges. Either way a
    version that is not ready within `ready_deadline_seconds` (default: the plan's start-up
    budget per replica replaced, plus 5 minutes) or fails the canary gate is rolled back to
    the last ready version, and the reason is recorded in the service's history.

    Example:
        >>> r = Rollout(strategy="canary", canary_weight=5, max_error_ratio=0.02)
        >>> r.strategy, r.canary_weight, r.max_latency_seconds
        ('canary', 5, None)

    Attributes:
        strategy: "surge" replaces replicas one at a time; "canary" runs the new version
            beside the old one behind a share of the requests first.
        ready_deadline_seconds: How long the new version may take to be ready before it is
            rolled back (default: the plan's start-up budget per replica, plus 5 minutes).
        canary_weight: Percent of the requests the canary receives (1 to 99).
        canary_replicas: Replicas of the new version during the canary.
        analysis_seconds: How long the canary is watched before it is promoted.
        max_error_ratio: Failed requests over all the canary answered, above which it is
            rolled back.
        max_latency_seconds: p95 end-to-end request latency above which the canary is rolled
            back (None: latency is not judged).
        min_requests: A canary that answered fewer requests is not judged good.
    """

    strategy: Literal["surge", "canary"] = "surge"
    ready_deadline_seconds: int | None = None
    canary_weight: int = 10  # percent of requests
    canary_replicas: int = 1
    analysis_seconds: int = 300
    max_error_ratio: float = 0.01  # failed / all requests the canary answered
    max_latency_seconds: float | None = None  # p95 end-to-end request latency
    min_requests: int = 20  # a canary that saw fewer is not judged good

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


def check_rollout(svc: ServeModel) -> None:
    """A canary needs routing weights to take its share, and a name that fits its suffix.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> from gkeml_sdk.errors import SpecError
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), rollout=Rollout(strategy="canary"))
        ... except SpecError as exc:
        ...     print(exc.field)
        rollout
    """
    from gkeml_sdk.serving.rules import MAX_NAME_LENGTH

    if svc.rollout.strategy != "canary":
        return
    if svc.routing is None or svc.routing.backend_only:
        raise fail(
            f"{svc.name}: a canary rollout without routing",
            rule="a canary takes its share of the requests through the routing weights "
            "(HTTPRoute backendRefs or VirtualService routes)",
            fix="routing=Routing(via='istio') or Routing(via='inference-gateway'), or "
            "Rollout(strategy='surge')",
            field="rollout",
        )
    if len(svc.name) + len(CANARY_SUFFIX) > MAX_NAME_LENGTH:
        keep = MAX_NAME_LENGTH - len(CANARY_SUFFIX)
        raise fail(
            f"name={svc.name!r} is too long for a canary named {svc.name + CANARY_SUFFIX!r}",
            rule=f"derived names stay within {MAX_NAME_LENGTH} characters",
            fix=f"name={svc.name[:keep].rstrip('-')!r}",
            field="name",
        )
