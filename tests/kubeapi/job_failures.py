"""What the Job and JobSet controllers decide when a pod fails, as pure functions over the
objects, for the fakes that play those controllers (`process_kubelet.ProcessKubelet`).

- `pod_failure_action`: the Job's podFailurePolicy (kubernetes
  pkg/controller/job/pod_failure_policy.go): rules in order, the first that matches wins;
  `onExitCodes` looks at the terminated app containers, then the init containers, skipping
  exit code 0 and filtering by `containerName`; `onPodConditions` at the pod's conditions. A
  FailJob match gives the Job's Failed message the controller writes.
- `job_failure`: whether the counted failures exhaust the Job's budget:
  `backoffLimitPerIndex` per completion index (reason FailedIndexes), else `backoffLimit`
  (default 6) over the Job (BackoffLimitExceeded).
- `jobset_failure_action`: the JobSet's failurePolicy (jobset
  pkg/controllers/failure_policy.go): the first rule whose `onJobFailureReasons`,
  `onJobFailureMessagePatterns` (regexes, any may match, searched as Go's MatchString does)
  and `targetReplicatedJobs` all match the failed Job; none: RestartJobSet, which fails the
  JobSet once `restartsCountTowardsMax` reached `maxRestarts`; no failurePolicy: FailedJobs.
"""

from __future__ import annotations

import re
from typing import Any

Obj = dict[str, Any]
DEFAULT_BACKOFF_LIMIT = 6  # the apiserver's default for a Job without backoffLimitPerIndex

# JobSet's condition reasons and messages (jobset pkg/constants/constants.go).
FAIL_JOBSET = ("FailJobSetFailurePolicyAction", "applying FailJobSet failure policy action")
REACHED_MAX_RESTARTS = (
    "ReachedMaxRestarts",
    "jobset failed due to reaching max number of restarts",
)
FAILED_JOBS = ("FailedJobs", "jobset failed due to one or more job failures")


def pod_failure_action(policy: Obj | None, pod: Obj) -> tuple[str, str]:
    """(action, Job failure message) for failed `pod` under a Job's podFailurePolicy: action
    FailJob, FailIndex, Ignore or Count (Count also when no rule matches)."""
    status = pod.get("status") or {}
    where = f"{pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}"
    for index, rule in enumerate((policy or {}).get("rules") or []):
        action = rule["action"]
        if "onExitCodes" in rule:
            matched = _exit_code_match(status, rule["onExitCodes"])
            if matched is None:
                continue
            name, code = matched
            return action, (
                f"Container {name} for pod {where} failed with exit code {code} matching "
                f"{action} rule at index {index}"
            )
        for pattern in rule.get("onPodConditions") or []:
            for cond in status.get("conditions") or []:
                if (cond.get("type"), cond.get("status")) == (pattern["type"], pattern["status"]):
                    return action, (
                        f"Pod {where} has condition {cond['type']} matching {action} rule at "
                        f"index {index}"
                    )
    return "Count", ""


def _exit_code_match(status: Obj, requirement: Obj) -> tuple[str, int] | None:
    wanted = requirement.get("containerName")
    for key in ("containerStatuses", "initContainerStatuses"):
        for container in status.get(key) or []:
            terminated = (container.get("state") or {}).get("terminated")
            if terminated is None or terminated.get("exitCode", 0) == 0:
                continue
            if wanted is not None and container.get("name") != wanted:
                continue
            code = int(terminated["exitCode"])
            listed = code in (requirement.get("values") or [])
            if listed == (requirement["operator"] == "In"):
                return str(container["name"]), code
    return None


def job_failure(job_spec: Obj, failures: int, index_failures: int) -> tuple[str, str] | None:
    """(reason, message) of a Job whose counted pod failures (`failures` over the Job,
    `index_failures` at the failed pod's index) exceed its budget; None while it retries."""
    per_index = job_spec.get("backoffLimitPerIndex")
    if per_index is not None:
        if index_failures > per_index:
            return "FailedIndexes", "Job has failed indexes"
        return None
    if failures > job_spec.get("backoffLimit", DEFAULT_BACKOFF_LIMIT):
        return "BackoffLimitExceeded", "Job has reached the specified backoff limit"
    return None


def jobset_failure_action(
    jobset: Obj, replicated_job: str, reason: str, message: str
) -> tuple[str, tuple[str, str] | None]:
    """(the action, the JobSet's Failed (reason, message) prefix, or None when it restarts)
    for a failed child Job of `replicated_job`."""
    policy = jobset["spec"].get("failurePolicy")
    if policy is None:
        return "FailJobSet", FAILED_JOBS
    action = "RestartJobSet"
    for rule in policy.get("rules") or []:
        reasons = rule.get("onJobFailureReasons") or []
        patterns = rule.get("onJobFailureMessagePatterns") or []
        targets = rule.get("targetReplicatedJobs") or []
        if reasons and reason not in reasons:
            continue
        if patterns and not any(re.search(p, message) for p in patterns):
            continue
        if targets and replicated_job not in targets:
            continue
        action = rule["action"]
        break
    if action == "FailJobSet":
        return action, FAIL_JOBSET
    status = jobset.get("status") or {}
    counted = action == "RestartJobSet"
    if counted and status.get("restartsCountTowardsMax", 0) >= policy.get("maxRestarts", 0):
        return action, REACHED_MAX_RESTARTS
    return action, None
