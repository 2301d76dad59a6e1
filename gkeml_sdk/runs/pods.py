"""Readers of a job's pods: which job they belong to, disruptions, exit codes, and what keeps
a container from starting."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from gkeml_sdk.core.objects import ObjView, condition, is_true, labels
from gkeml_sdk.scheduling.kueue import (
    JOB_CONTROLLER_UID_LABEL,
    JOB_NAME_LABEL,
    JOBSET_NAME_LABEL,
    JOBSET_RESTART_ATTEMPT_LABEL,
    JOBSET_UID_LABEL,
)


def pod_belongs(pod: ObjView, job_name: str, job_uid: str, job_kind: str | None) -> bool:
    """Whether a pod was created for the job (JobSet or batch Job labels).

    Example:
        >>> pod_belongs({"metadata": {"labels": {JOBSET_NAME_LABEL: "t"}}}, "t", "", "JobSet")
        True
    """
    lab = labels(pod)
    if job_kind in ("JobSet", None) and lab.get(JOBSET_NAME_LABEL) == job_name:
        return not job_uid or lab.get(JOBSET_UID_LABEL, job_uid) == job_uid
    if job_kind in ("Job", None) and lab.get(JOB_NAME_LABEL) == job_name:
        return not job_uid or lab.get(JOB_CONTROLLER_UID_LABEL, job_uid) == job_uid
    return False


def disruption(pod: ObjView) -> ObjView | None:
    """The pod's `DisruptionTarget=True` condition (node loss, eviction, preemption), or None.

    Example:
        >>> disruption({"status": {"conditions": [{"type": "DisruptionTarget", "status": "True",
        ...     "reason": "TerminationByKubelet"}]}})["reason"]
        'TerminationByKubelet'
    """
    cond = condition(pod, "DisruptionTarget")
    return cond if cond is not None and cond.get("status") == "True" else None


def exit_summary(pod: ObjView) -> str:
    """Human summary of why a pod's containers stopped, e.g. "main exited with code 1", init
    containers first; with the last line of a container's termination message (the tail of
    its log when it sets FallbackToLogsOnError: pip's error, for gkeml's bootstrap).

    Example:
        >>> exit_summary({"status": {"containerStatuses": [{"name": "main",
        ...     "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}})
        'main exited with code 1 (Error)'
    """
    status = pod.get("status") or {}
    parts = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(key) or []:
            term = (cs.get("state") or {}).get("terminated")
            if term and term.get("exitCode", 0) != 0:
                reason = f" ({term['reason']})" if term.get("reason") else ""
                lines = [line for line in str(term.get("message") or "").splitlines() if line]
                said = f": {lines[-1].strip()}" if lines else ""
                parts.append(
                    f"{cs.get('name', '?')} exited with code {term['exitCode']}{reason}{said}"
                )
    return "; ".join(parts)


@dataclass
class PodSummary:
    """What the pods of the job's current attempt say."""

    up: int = 0  # Running+Ready or Succeeded, not being disrupted
    user_failed: list[ObjView] = field(default_factory=list)  # Failed without DisruptionTarget
    disrupted: list[ObjView] = field(default_factory=list)  # DisruptionTarget=True, not Succeeded
    seen: int = 0


def summarize_pods(pods: Iterable[ObjView], job: ObjView | None) -> PodSummary:
    """Summarize the pods of the job's current attempt (JobSet `status.restarts`).

    Example:
        >>> ready = {"status": {"phase": "Running", "conditions": [{"type": "Ready",
        ...     "status": "True"}]}, "metadata": {"name": "p"}}
        >>> summarize_pods([ready], None).up
        1
    """
    attempt = str(((job or {}).get("status") or {}).get("restarts") or 0)
    summary = PodSummary()
    for pod in pods:
        meta = pod.get("metadata") or {}
        # Pods of an earlier JobSet attempt are being torn down; they say nothing about now.
        if labels(pod).get(JOBSET_RESTART_ATTEMPT_LABEL, attempt) != attempt:
            continue
        phase = (pod.get("status") or {}).get("phase")
        disrupted = disruption(pod) is not None and phase != "Succeeded"
        # A pod being deleted for another reason (suspension, job cleanup) is just going away.
        if meta.get("deletionTimestamp") and not disrupted and phase != "Failed":
            continue
        summary.seen += 1
        if disrupted:
            summary.disrupted.append(pod)
        elif phase == "Failed":
            summary.user_failed.append(pod)
        elif phase == "Succeeded" or (phase == "Running" and is_true(pod, "Ready")):
            summary.up += 1
    return summary


# Job/JobSet failure reasons that come from the job's own retry budget, i.e. its code failing.
_STUCK_REASONS = frozenset(
    {
        "CreateContainerConfigError",
        "CreateContainerError",
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
    }
)


def stuck_container(pods: list[ObjView]) -> tuple[ObjView, str, str] | None:
    for pod in pods:
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            waiting = (status.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in _STUCK_REASONS:
                return pod, waiting["reason"], waiting.get("message") or waiting["reason"]
    return None
