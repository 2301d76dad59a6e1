"""Kueue's webhooks for its queue objects (admission-rules.md §3.7): the rules that are not
CEL in the CRDs (those run in cel.py). Answered as 403 without details."""

from __future__ import annotations

from typing import Any

from .. import errors
from .fielderr import FieldError, dns1123_subdomain, invalid, webhook_denied
from .review import Review, dig

CLUSTERQUEUES = "clusterqueues.kueue.x-k8s.io"
COHORTS = "cohorts.kueue.x-k8s.io"
LOCALQUEUES = "localqueues.kueue.x-k8s.io"
WEBHOOKS = {
    CLUSTERQUEUES: "vclusterqueue.kb.io",
    COHORTS: "vcohort.kb.io",
    LOCALQUEUES: "vlocalqueue.kb.io",
}


def _quantity(value: Any) -> float:
    """A Kubernetes quantity as a number (enough to compare limits)."""
    text = str(value)
    suffixes = {
        "m": 1e-3,
        "k": 1e3,
        "M": 1e6,
        "G": 1e9,
        "T": 1e12,
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
    }
    for suffix in sorted(suffixes, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * suffixes[suffix]
    return float(text)


def _resource_group_errors(spec: dict[str, Any], parent_field: str) -> list[FieldError]:
    errs: list[FieldError] = []
    has_parent = bool(spec.get(parent_field))
    seen_flavors: set[str] = set()
    for g, group in enumerate(spec.get("resourceGroups") or []):
        covered = group.get("coveredResources") or []
        for c, name in enumerate(covered):
            if name in covered[:c]:
                errs.append(
                    FieldError(
                        "Duplicate", f"spec.resourceGroups[{g}].coveredResources[{c}]", "", name
                    )
                )
        for f, flavor in enumerate(group.get("flavors") or []):
            fpath = f"spec.resourceGroups[{g}].flavors[{f}]"
            if flavor.get("name") in seen_flavors:
                errs.append(FieldError("Duplicate", f"{fpath}.name", "", flavor.get("name")))
            seen_flavors.add(str(flavor.get("name")))
            for r, res in enumerate(flavor.get("resources") or []):
                rpath = f"{fpath}.resources[{r}]"
                if r < len(covered) and res.get("name") != covered[r]:
                    errs.append(
                        invalid(
                            f"{rpath}.name",
                            res.get("name"),
                            f"must match the name in coveredResources[{r}]",
                        )
                    )
                for limit in ("borrowingLimit", "lendingLimit"):
                    if limit in res and not has_parent:
                        which = "cohort" if parent_field == "cohortName" else "parent"
                        errs.append(
                            invalid(
                                f"{rpath}.{limit}", res[limit], f"must be nil when {which} is empty"
                            )
                        )
                if parent_field == "cohortName" and "lendingLimit" in res:
                    try:
                        over = _quantity(res["lendingLimit"]) > _quantity(
                            res.get("nominalQuota", 0)
                        )
                    except ValueError:
                        over = False
                    if over:
                        errs.append(
                            invalid(
                                f"{rpath}.lendingLimit",
                                res["lendingLimit"],
                                "must be less than or equal to the nominalQuota",
                            )
                        )
    return errs


def validate(review: Review) -> errors.ApiError | None:
    key = review.rt.key
    if key not in WEBHOOKS:
        return None
    spec = review.obj.get("spec") or {}
    errs: list[FieldError] = []
    if key == CLUSTERQUEUES:
        errs = _resource_group_errors(spec, "cohortName")
        weight = dig(spec, "fairSharing", "weight")
        if weight is not None and 0 < _quantity(weight) <= 1e-9:
            errs.append(
                invalid("spec.fairSharing.weight", weight, "must be 0 or greater than 1e-9")
            )
        if review.operation == "UPDATE":
            before = dig(review.old, "spec", "concurrentAdmissionPolicy")
            if before != spec.get("concurrentAdmissionPolicy"):
                errs.append(
                    invalid(
                        "spec.concurrentAdmissionPolicy",
                        spec.get("concurrentAdmissionPolicy"),
                        "field is immutable",
                    )
                )
    elif key == COHORTS:
        errs = _resource_group_errors(spec, "parentName")
    elif key == LOCALQUEUES and spec.get("clusterQueue"):
        cq = spec["clusterQueue"]
        errs = [invalid("spec.clusterQueue", cq, m) for m in dns1123_subdomain(cq)]
    return webhook_denied(WEBHOOKS[key], errs) if errs else None
