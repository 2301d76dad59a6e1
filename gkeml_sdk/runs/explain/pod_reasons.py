"""What the kubelet and the scheduler say about a run's pods: image pulls, crashes, OOM kills
and unschedulable pods, read the way they report them
(https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gkeml_sdk.core.environment import BOOTSTRAP_CONTAINER, BOOTSTRAP_FAILED
from gkeml_sdk.core.objects import ObjView, condition
from gkeml_sdk.hardware.listing import accelerator_labels
from gkeml_sdk.runs.explain.explanation import Category, Evidence
from gkeml_sdk.runs.explain.reading import (
    condition_evidence,
    event_evidence,
    events_about,
    name_of,
)

_IMAGE = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
_CONFIG = ("CreateContainerConfigError", "CreateContainerError")
# The last reason of a message ends in "."; a resource name never does.
_INSUFFICIENT = re.compile(r"(\d+) Insufficient ([\w./-]*\w)")
_SELECTOR = "didn't match Pod's node affinity/selector"


@dataclass(frozen=True)
class Finding:
    """A cause found in the objects: its category, the sentence, and the facts behind it."""

    category: Category
    sentence: str
    evidence: tuple[Evidence, ...] = ()


def diagnose_pods(pods: Iterable[ObjView], events: Iterable[ObjView], run: str) -> Finding | None:
    """The first pod-level problem among `pods` (image, config, crash, OOM, scheduling).

    Example:
        >>> pod = {"metadata": {"name": "p"}, "status": {"containerStatuses": [{"name": "main",
        ...     "image": "nosuch:1", "state": {"waiting": {"reason": "ImagePullBackOff",
        ...     "message": 'Back-off pulling image "nosuch:1"'}}}]}}
        >>> diagnose_pods([pod], [], "t").category
        <Category.IMAGE: 'image'>
    """
    pods = [p for p in pods if not (p.get("metadata") or {}).get("deletionTimestamp")]
    events = list(events)
    for check in (_image, _config, _bootstrap, _crash, _scheduling):
        for pod in pods:
            found = check(pod, events, run)
            if found is not None:
                return found
    return None


def _containers(pod: ObjView) -> list[ObjView]:
    status = pod.get("status") or {}
    return list(status.get("initContainerStatuses") or []) + list(
        status.get("containerStatuses") or []
    )


def _state_evidence(pod: ObjView, cs: ObjView, key: str = "state") -> Evidence:
    state = cs.get(key) or {}
    which = next(iter(state), "")
    detail = state.get(which) or {}
    message = str(detail.get("message") or "")
    if which == "terminated":
        message = f"exit code {detail.get('exitCode')}" + (f"; {message}" if message else "")
    return Evidence(
        "Pod",
        name_of(pod),
        f"container {cs.get('name', '?')} {'last ' if key == 'lastState' else ''}{which}",
        str(detail.get("reason") or ""),
        message,
        str(detail.get("finishedAt") or detail.get("startedAt") or ""),
    )


def _pod_events(pod: ObjView, events: list[ObjView]) -> tuple[Evidence, ...]:
    return tuple(event_evidence(e) for e in events_about(events, [("Pod", name_of(pod))]))


def _image(pod: ObjView, events: list[ObjView], run: str) -> Finding | None:
    for cs in _containers(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in _IMAGE:
            image = cs.get("image") or "?"
            return Finding(
                Category.IMAGE,
                f"Pod {name_of(pod)} cannot pull image {image} ({waiting['reason']}: "
                f"{waiting.get('message') or 'no message'}). Check the image name and tag, and "
                "that the nodes may read the registry (Artifact Registry Reader for the node "
                "service account); then resubmit.",
                (_state_evidence(pod, cs), *_pod_events(pod, events)),
            )
    return None


def _config(pod: ObjView, events: list[ObjView], run: str) -> Finding | None:
    for cs in _containers(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in _CONFIG:
            return Finding(
                Category.USER_ERROR,
                f"Pod {name_of(pod)} cannot start container {cs.get('name', '?')} "
                f"({waiting['reason']}: {waiting.get('message') or 'no message'}). Create the "
                "Secret or ConfigMap it names, or fix the reference; then resubmit.",
                (_state_evidence(pod, cs), *_pod_events(pod, events)),
            )
    return None


def _bootstrap(pod: ObjView, events: list[ObjView], run: str) -> Finding | None:
    for cs in (pod.get("status") or {}).get("initContainerStatuses") or []:
        ended = (cs.get("state") or {}).get("terminated") or {}
        if cs.get("name") != BOOTSTRAP_CONTAINER or ended.get("exitCode") != BOOTSTRAP_FAILED:
            continue
        lines = [line.strip() for line in str(ended.get("message") or "").splitlines()]
        said = next((line for line in reversed(lines) if line), "")
        return Finding(
            Category.CRASH,
            f"Pod {name_of(pod)} could not prepare its workspace: the {BOOTSTRAP_CONTAINER} "
            f"container exited with code {BOOTSTRAP_FAILED}"
            + (f" ({said})" if said else "")
            + ", so the run failed at once without spending max_restarts. Read pip's message "
            "in the logs (run.logs()), fix requirements= (or the workdir), and resubmit.",
            (_state_evidence(pod, cs), *_pod_events(pod, events)),
        )
    return None


def _crash(pod: ObjView, events: list[ObjView], run: str) -> Finding | None:
    for cs in _containers(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        for key in ("state", "lastState"):
            ended = (cs.get(key) or {}).get("terminated") or {}
            if ended.get("reason") == "OOMKilled":
                looping = " and restarts in a loop (CrashLoopBackOff)" if waiting else ""
                return Finding(
                    Category.CRASH,
                    f"Pod {name_of(pod)} ran out of memory: container {cs.get('name', '?')} was "
                    f"OOMKilled (exit code {ended.get('exitCode', 137)}){looping}. Ask for more "
                    "memory (memory=), or use less (smaller batch, gradient checkpointing).",
                    (_state_evidence(pod, cs, key), *_pod_events(pod, events)),
                )
        if waiting.get("reason") == "CrashLoopBackOff":
            last = (cs.get("lastState") or {}).get("terminated") or {}
            code = f" with code {last['exitCode']}" if "exitCode" in last else ""
            return Finding(
                Category.CRASH,
                f"Pod {name_of(pod)} keeps crashing: container {cs.get('name', '?')} exits"
                f"{code} and the kubelet restarts it with back-off (CrashLoopBackOff). Read "
                "its logs (run.logs()), fix the code, and resubmit.",
                (_state_evidence(pod, cs), _state_evidence(pod, cs, "lastState"),
                 *_pod_events(pod, events)),
            )  # fmt: skip
    return None


def _scheduling(pod: ObjView, events: list[ObjView], run: str) -> Finding | None:
    scheduled = condition(pod, "PodScheduled") or {}
    failed = [e for e in events_about(events, [("Pod", name_of(pod))])
              if e.get("reason") == "FailedScheduling"]  # fmt: skip
    if scheduled.get("reason") != "Unschedulable" and not failed:
        return None
    if (pod.get("spec") or {}).get("nodeName"):
        return None
    message = str((failed[-1] if failed else scheduled).get("message") or "")
    selector = (pod.get("spec") or {}).get("nodeSelector") or {}
    keys = accelerator_labels()  # the catalog rows' label keys: no hardware object here
    hardware = ", ".join(f"{k}={v}" for k, v in selector.items() if k in keys)
    short = message.split(" preemption:")[0].rstrip(".")
    if _SELECTOR in message and hardware:
        why = (
            f"no node has the requested accelerator ({hardware}): {short}. Add a node pool "
            "with that accelerator (or enable node auto-provisioning), or ask for one the "
            "cluster has."
        )
    elif _INSUFFICIENT.search(message):
        short_of = ", ".join(sorted({m[1] for m in _INSUFFICIENT.findall(message)}))
        why = (
            f"no node has enough free {short_of}: {short}. The cluster autoscaler may add "
            "nodes; if it cannot, free capacity, ask for fewer per pod, or use Spot or another "
            "zone."
        )
    else:
        why = f"the scheduler cannot place it: {short or 'no message'}."
    evidence = [*condition_evidence(pod, "PodScheduled"), *_pod_events(pod, events)]
    return Finding(
        Category.PLACEMENT, f"Pod {name_of(pod)} is not scheduled: {why}", tuple(evidence)
    )
