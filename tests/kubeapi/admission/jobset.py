"""JobSet's own webhooks: `mjobset.kb.io` defaults (create only) and `vjobset.kb.io` rules
(admission-rules.md §1.1-1.4), answering 422 Invalid with causes."""

from __future__ import annotations

import copy
import re
from typing import Any

from .. import errors
from .fielderr import FieldError, dns1035, dns1123_subdomain, internal, invalid, webhook_invalid
from .review import JOBSETS, Review, dig

WEBHOOK = "vjobset.kb.io"
MAX_INT32 = 2147483647
RULE_NAME_RE = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
JOB_NAME_TOO_LONG = (
    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
)
POD_NAME_TOO_LONG = (
    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
)
_POD_MUTABLE_WHEN_SUSPENDED = ("nodeSelector", "tolerations", "schedulingGates")


def mutate(review: Review) -> None:
    """§1.1: the defaults the mutating webhook fills in on CREATE."""
    if review.rt.key != JOBSETS or review.operation != "CREATE":
        return
    spec = review.obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("successPolicy", {"operator": "All"})
    spec.setdefault("startupPolicy", {"startupPolicyOrder": "AnyOrder"})
    for rjob in spec.get("replicatedJobs") or []:
        # Go marshals the templates' ObjectMeta structs as {} even when empty
        rjob.setdefault("template", {}).setdefault("metadata", {})
        job_spec = rjob["template"].setdefault("spec", {})
        job_spec.setdefault("template", {}).setdefault("metadata", {})
        job_spec.setdefault("completionMode", "Indexed")
        pod_spec = job_spec.setdefault("template", {}).setdefault("spec", {})
        if not pod_spec.get("restartPolicy"):
            pod_spec["restartPolicy"] = "OnFailure"
    network = spec.setdefault("network", {})
    network.setdefault("enableDNSHostnames", True)
    network.setdefault("publishNotReadyAddresses", True)
    for i, rule in enumerate(dig(spec, "failurePolicy", "rules") or []):
        if not rule.get("name"):
            rule["name"] = f"failurePolicyRule{i}"
    for policy in spec.get("volumeClaimPolicies") or []:
        policy.setdefault("retentionPolicy", {"whenDeleted": "Delete"})


def validate(review: Review) -> errors.ApiError | None:
    if review.rt.key != JOBSETS:
        return None
    if review.operation == "CREATE":
        errs = create_errors(review.obj)
    else:
        errs = update_errors(review.old or {}, review.obj)
    return webhook_invalid(WEBHOOK, review.rt, review.name, errs) if errs else None


def _names(spec: dict[str, Any]) -> list[str]:
    return [str(r.get("name")) for r in spec.get("replicatedJobs") or []]


def create_errors(obj: dict[str, Any]) -> list[FieldError]:
    """§1.2 + §1.3, in the webhook's order."""
    spec = obj.get("spec") or {}
    name = str(dig(obj, "metadata", "name") or "")
    rjobs = spec.get("replicatedJobs") or []
    errs: list[FieldError] = []
    if rjobs and rjobs[0].get("dependsOn") is not None:
        errs.append(internal("DependsOn can't be set for the first ReplicatedJob"))
    subdomain = dig(spec, "network", "subdomain")
    if subdomain:
        path = "spec.network.subdomain"
        errs += [invalid(path, subdomain, m) for m in dns1123_subdomain(subdomain)]
        for m in dns1035(subdomain):
            if "must be no more than 63" in m:
                m = ".spec.network.subdomain is too long, must be less than 63 characters"
            errs.append(invalid(path, subdomain, m))
    managed_by = spec.get("managedBy")
    if managed_by is not None:
        errs += _managed_by_errors(str(managed_by))
    seen: set[str] = set()
    for i, rjob in enumerate(rjobs):
        errs += _replicated_job_errors(name, i, rjob, seen)
    valid = _names(spec)
    for target in dig(spec, "successPolicy", "targetReplicatedJobs") or []:
        if target not in valid:
            errs.append(
                internal(
                    f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs"
                )
            )
    if spec.get("failurePolicy") is not None:
        errs += failure_policy_errors(spec["failurePolicy"], valid, rjobs)
    if spec.get("coordinator") is not None:
        errs += coordinator_errors(name, spec)
    return errs


def _managed_by_errors(value: str) -> list[FieldError]:
    path = "spec.managedBy"
    errs = []
    prefix, _, rest = value.partition("/")
    if not rest:
        errs.append(invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")'))
    else:
        errs += [invalid(path, prefix, m) for m in dns1123_subdomain(prefix)]
    if len(value) > 63:
        errs.append(FieldError("Invalid", path, "may not be more than 63 bytes", value))
    return errs


def _replicated_job_errors(
    name: str, i: int, rjob: dict[str, Any], seen: set[str]
) -> list[FieldError]:
    errs: list[FieldError] = []
    rname = str(rjob.get("name") or "")
    replicas = int(rjob.get("replicas", 1))
    job_spec = dig(rjob, "template", "spec") or {}
    parallelism = int(job_spec.get("parallelism", 1))
    if parallelism * replicas > MAX_INT32:
        errs.append(
            internal(
                f"the product of replicas and parallelism must not exceed {MAX_INT32} "
                f"for replicatedJob '{rname}'"
            )
        )
    for m in dns1035(str(rjob.get("groupName", "default"))):
        if "must be no more than 63" in m:
            m = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
        errs.append(internal(m))
    path = f"spec.replicatedJobs[{i}].name"
    longest_job = f"{name}-{rname}-{replicas - 1}"
    for m in dns1035(longest_job):
        if "must be no more than 63" in m:
            m = JOB_NAME_TOO_LONG
        errs.append(invalid(path, longest_job, m))
    completions = job_spec.get("completions")
    if job_spec.get("completionMode") == "Indexed" and completions is not None:
        longest_pod = f"{longest_job}-{int(completions) - 1}-abcde"
        for m in dns1035(longest_pod):
            if "must be no more than 63" in m:
                m = POD_NAME_TOO_LONG
            errs.append(invalid(path, longest_job, m))
    depends = rjob.get("dependsOn")
    if depends:
        target = depends[0].get("name")
        if target not in seen:
            errs.append(
                internal(f"replicatedJob: {rname} cannot depend on replicatedJob: {target}")
            )
    seen.add(rname)
    return errs


def failure_policy_errors(
    policy: dict[str, Any], valid: list[str], rjobs: list[dict[str, Any]]
) -> list[FieldError]:
    rules = policy.get("rules") or []
    if any(r.get("action") in ("RestartJob", "RestartJobAndIgnoreMaxRestarts") for r in rules):
        return [
            internal(
                "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not "
                "allowed when RestartJob feature gate is disabled"
            )
        ]
    if policy.get("restartStrategy") == "InPlaceRestart":
        return [
            internal(
                "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate "
                "is disabled"
            )
        ]
    errs: list[FieldError] = []
    by_name: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        rule_name = str(rule.get("name") or "")
        if not 1 <= len(rule_name) <= 128:
            errs.append(
                internal(
                    f"invalid failure policy rule name of length {len(rule_name)}, the rule name "
                    "must be at least 1 characters long and at most 128 characters long"
                )
            )
        by_name.setdefault(rule_name, []).append(index)
        if not RULE_NAME_RE.match(rule_name):
            errs.append(
                internal(
                    f"invalid failure policy rule name '{rule_name}', a failure policy rule name "
                    "must start with an alphabetic character, optionally followed by a string of "
                    "alphanumeric characters or '_,:', and must end with an alphanumeric "
                    "character or '_'"
                )
            )
        for target in rule.get("targetReplicatedJobs") or []:
            if target not in valid:
                errs.append(
                    internal(
                        f"invalid replicatedJob name '{target}' in failure policy does not "
                        "appear in .spec.ReplicatedJobs"
                    )
                )
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in FAILURE_REASONS:
                errs.append(
                    internal(
                        f"invalid job failure reason '{reason}' in failure policy is not a "
                        "recognized job failure reason"
                    )
                )
    for rule_name, indices in by_name.items():
        if len(indices) > 1:
            listed = " ".join(str(i) for i in indices)
            errs.append(
                internal(
                    f"rule names are not unique, rules with indices [{listed}] all have the "
                    f"same name '{rule_name}'"
                )
            )
    return errs


def coordinator_errors(name: str, spec: dict[str, Any]) -> list[FieldError]:
    coord = spec["coordinator"]
    rname = coord.get("replicatedJob")
    rjob = next((r for r in spec.get("replicatedJobs") or [] if r.get("name") == rname), None)
    if rjob is None:
        return [internal(f"coordinator replicatedJob {rname} does not exist")]
    job_index, pod_index = int(coord.get("jobIndex", 0)), int(coord.get("podIndex", 0))
    if not 0 <= job_index < int(rjob.get("replicas", 1)):
        return [internal(f"coordinator job index {job_index} is invalid for replicatedJob {rname}")]
    job_spec = dig(rjob, "template", "spec") or {}
    if job_spec.get("completionMode") != "Indexed" or job_spec.get("completions") is None:
        return [internal("job for coordinator pod must be indexed completion mode")]
    if not 0 <= pod_index < int(job_spec["completions"]):
        return [
            internal(
                f"coordinator pod index {pod_index} is invalid for replicatedJob {rname} job "
                f"index {job_index}"
            )
        ]
    subdomain = dig(spec, "network", "subdomain") or name
    value = f"{name}-{rname}-{job_index}-{pod_index}.{subdomain}"
    if len(value) > 63:
        return [
            internal(
                f'spec will lead to invalid label value "{value}" for coordinator label '
                '"jobset.sigs.k8s.io/coordinator" (long JobSet / ReplicatedJob / SubDomain '
                "name?): must be no more than 63 bytes"
            )
        ]
    return []


def update_errors(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    """§1.4: replicatedJobs and managedBy immutable; pod scheduling fields mutable while the
    old or the new object is suspended."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    munged = copy.deepcopy(new_spec.get("replicatedJobs"))
    old_rjobs = old_spec.get("replicatedJobs")
    if (old_spec.get("suspend") or new_spec.get("suspend")) and isinstance(munged, list):
        for i, rjob in enumerate(munged):
            old_pod = dig(old_rjobs, i, "template", "spec", "template") or {}
            pod = rjob.setdefault("template", {}).setdefault("spec", {}).setdefault("template", {})
            pod_meta = pod.setdefault("metadata", {})
            for key in ("labels", "annotations"):
                _copy_key(pod_meta, (old_pod.get("metadata") or {}), key)
            pod_spec = pod.setdefault("spec", {})
            for key in _POD_MUTABLE_WHEN_SUSPENDED:
                _copy_key(pod_spec, old_pod.get("spec") or {}, key)
    errs: list[FieldError] = []
    if _normal(munged) != _normal(old_rjobs):
        errs.append(
            invalid("spec.replicatedJobs", new_spec.get("replicatedJobs"), "field is immutable")
        )
    if new_spec.get("managedBy") != old_spec.get("managedBy"):
        errs.append(invalid("spec.managedBy", new_spec.get("managedBy"), "field is immutable"))
    return errs


def _copy_key(dst: dict[str, Any], src: dict[str, Any], key: str) -> None:
    if key in src:
        dst[key] = copy.deepcopy(src[key])
    else:
        dst.pop(key, None)


def _normal(value: Any) -> Any:
    """Go struct equality: empty maps/lists and absent fields compare equal."""
    if isinstance(value, dict):
        out = {k: _normal(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value
