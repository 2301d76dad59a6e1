"""LeaderWorkerSet's own webhooks: `mleaderworkerset.kb.io` defaults (create AND update) and
`vleaderworkerset.kb.io` rules (admission-rules.md §2), answering 403 without details."""

from __future__ import annotations

import re
from typing import Any

from .. import errors
from .fielderr import FieldError, dns1035, invalid, webhook_denied
from .review import LWS, Review, annotations, dig

WEBHOOK = "vleaderworkerset.kb.io"
EXCLUSIVE_SUBGROUP = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
_ROLLING = "spec.rolloutStrategy.rollingUpdateConfiguration"


def mutate(review: Review) -> None:
    if review.rt.key != LWS:
        return
    spec = review.obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    tpl = spec.setdefault("leaderWorkerTemplate", {})
    policy = tpl.get("restartPolicy")
    tpl["restartPolicy"] = "None" if policy == "Default" else policy or "RecreateGroupOnPodRestart"
    rollout = spec.setdefault("rolloutStrategy", {})
    rollout.setdefault("type", "RollingUpdate")
    rolling = rollout.setdefault("rollingUpdateConfiguration", {})
    rolling.setdefault("maxUnavailable", 1)
    rolling.setdefault("maxSurge", 0)
    rolling.setdefault("partition", 0)
    spec.setdefault("networkConfig", {}).setdefault("subdomainPolicy", "Shared")
    spec.setdefault("startupPolicy", "LeaderCreated")
    if isinstance(tpl.get("subGroupPolicy"), dict):
        tpl["subGroupPolicy"].setdefault("subGroupPolicyType", "LeaderWorker")


def validate(review: Review) -> errors.ApiError | None:
    if review.rt.key != LWS:
        return None
    errs = lws_errors(review.obj)
    if review.operation == "UPDATE":
        errs += _update_errors(review.old or {}, review.obj)
    return webhook_denied(WEBHOOK, errs) if errs else None


def _int_or_percent(value: Any, replicas: int) -> tuple[int, bool]:
    """(scaled value, was a percent > 100%)."""
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1]) if re.fullmatch(r"-?\d+", value[:-1]) else 0
        return (pct * replicas + 99) // 100, pct > 100
    return int(value or 0), False


def lws_errors(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    name = str(dig(obj, "metadata", "name") or "")
    errs = [invalid("metadata.name", name, m) for m in dns1035(name)]
    tpl = spec.get("leaderWorkerTemplate") or {}
    size = int(tpl.get("size", 1))
    replicas = int(spec.get("replicas", 1))
    if size < 1:
        errs.append(
            invalid("spec.leaderWorkerTemplate.size", size, "size must be equal or greater than 1")
        )
    if replicas < 0:
        errs.append(invalid("spec.replicas", replicas, "replicas must be equal or greater than 0"))
    if replicas * size > 2147483647:
        errs.append(
            invalid(
                "spec.replicas",
                replicas,
                "the product of replicas and worker replicas must not exceed 2147483647",
            )
        )
    rolling = dig(spec, "rolloutStrategy", "rollingUpdateConfiguration") or {}
    unavailable, unavailable_pct = _int_or_percent(rolling.get("maxUnavailable", 1), replicas)
    surge, surge_pct = _int_or_percent(rolling.get("maxSurge", 0), replicas)
    for key, value, over in (
        ("maxUnavailable", unavailable, unavailable_pct),
        ("maxSurge", surge, surge_pct),
    ):
        raw = rolling.get(key)
        if value < 0:
            errs.append(invalid(f"{_ROLLING}.{key}", raw, "must be greater than or equal to 0"))
        if over:
            errs.append(invalid(f"{_ROLLING}.{key}", raw, "must not be greater than 100%"))
    if unavailable == 0 and surge == 0 and replicas != 0:
        errs.append(
            invalid(
                f"{_ROLLING}.maxUnavailable",
                rolling.get("maxUnavailable"),
                "must not be 0 when `maxSurge` is 0",
            )
        )
    partition = rolling.get("partition", 0)
    if isinstance(partition, int) and partition < 0:
        errs.append(
            invalid(f"{_ROLLING}.partition", partition, "must be greater than or equal to 0")
        )
    errs += _subgroup_errors(obj, tpl, size)
    return errs


def _subgroup_errors(obj: dict[str, Any], tpl: dict[str, Any], size: int) -> list[FieldError]:
    path = "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize"
    sub_size = dig(tpl, "subGroupPolicy", "subGroupSize")
    errs: list[FieldError] = []
    if sub_size is None:
        if EXCLUSIVE_SUBGROUP in annotations(obj):
            errs.append(
                invalid(
                    "metadata.annotations",
                    annotations(obj)[EXCLUSIVE_SUBGROUP],
                    "cannot have subgroup-exclusive-topology without subGroupSize set",
                )
            )
        return errs
    sub_size = int(sub_size)
    if sub_size < 1:
        return [invalid(path, sub_size, "subGroupSize must be equal or greater than 1")]
    if sub_size > size:
        errs.append(invalid(path, sub_size, "subGroupSize cannot be larger than size"))
    leader_excluded = dig(tpl, "subGroupPolicy", "subGroupPolicyType") == "LeaderExcluded"
    if leader_excluded and (size - 1) % sub_size != 0:
        errs.append(invalid(path, sub_size, "size - 1 must be divisible by subGroupSize"))
    elif not leader_excluded and size % sub_size != 0 and (size - 1) % sub_size != 0:
        errs.append(invalid(path, sub_size, "size or size - 1 must be divisible by subGroupSize"))
    return errs


def _update_errors(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    path = "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize"
    before = dig(old, "spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize")
    after = dig(new, "spec", "leaderWorkerTemplate", "subGroupPolicy", "subGroupSize")
    errs: list[FieldError] = []
    if before is None and after is not None:
        errs.append(
            invalid(path, after, "cannot enable subGroupSize after the lws is already created")
        )
    elif before is not None and after is None:
        errs.append(FieldError("Forbidden", path, "cannot remove subGroupSize after enabled"))
    elif before != after:
        errs.append(invalid(path, after, "field is immutable"))
    old_policy = dig(old, "spec", "networkConfig", "subdomainPolicy")
    if old_policy is not None and dig(new, "spec", "networkConfig", "subdomainPolicy") is None:
        errs.append(
            invalid(
                "spec.networkConfig.subdomainPolicy", None, "cannot set subdomainPolicy as null"
            )
        )
    return errs
