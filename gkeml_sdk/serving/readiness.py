"""What a running model server shows (pure, no I/O): why it is not ready, from its Deployment or
LeaderWorkerSet and its pods, and what a canary answered, from the engine's /metrics.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from gkeml_sdk.core.objects import ObjView, condition, is_true
from gkeml_sdk.hardware.listing import accelerator_labels, accelerator_resources
from gkeml_sdk.serving.catalog import Metric, Outcomes
from gkeml_sdk.serving.rollout_machine import CanarySample

_IMAGE_PULL = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
_CONFIG = ("CreateContainerConfigError", "CreateContainerError")
_KUEUE_GATE = "kueue.x-k8s.io/admission"
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
QUANTILE = 0.95


class ServingState(enum.Enum):
    """Where a model server stands; the order below is how much a state explains (worst first).

    Example:
        >>> ServingState("OutOfMemory") is ServingState.OUT_OF_MEMORY
        True
    """

    CONFIG_ERROR = "ConfigError"
    IMAGE_PULL_FAILED = "ImagePullFailed"
    OUT_OF_MEMORY = "OutOfMemory"
    CRASHING = "Crashing"
    UNSCHEDULABLE = "Unschedulable"
    CREATE_FAILED = "CreateFailed"
    DISRUPTED = "Disrupted"
    QUEUED = "Queued"
    PENDING = "Pending"
    STARTING = "Starting"
    ROLLING_OUT = "RollingOut"
    STOPPED = "Stopped"
    READY = "Ready"


_RANK = {state: i for i, state in enumerate(ServingState)}


@dataclass(frozen=True)
class ServingStatus:
    """A state with the Kubernetes reason and an explanation that says what to do.

    Example:
        >>> s = ServingStatus(ServingState.READY, "Available", "2/2 replicas ready", 2, 2)
        >>> s.ready, str(s)
        (True, 'Ready: 2/2 replicas ready')
    """

    state: ServingState
    reason: str
    message: str
    ready_replicas: int
    desired_replicas: int

    @property
    def ready(self) -> bool:
        """True when every desired replica serves traffic."""
        return self.state is ServingState.READY

    def __str__(self) -> str:
        return f"{self.state.value}: {self.message}"


def serving_status(server: ObjView, pods: Iterable[ObjView]) -> ServingStatus:
    """Status of a Deployment or LeaderWorkerSet (`server`, as the API returns it) and its pods.

    When replicas are not all ready, the most telling pod problem is reported: a missing
    Secret, an image that cannot be pulled, an out-of-memory kill, a crash loop, no node
    with the GPU type or count, waiting for Kueue, or still loading the model.

    Example:
        >>> dep = {"kind": "Deployment", "metadata": {"generation": 1},
        ...        "spec": {"replicas": 1}, "status": {"observedGeneration": 1}}
        >>> pod = {"metadata": {"name": "chat-1"}, "spec": {"containers": [
        ...     {"name": "server", "image": "vllm/vllm-openai:v0"}]}, "status": {
        ...     "phase": "Pending", "containerStatuses": [{"name": "server", "image":
        ...     "vllm/vllm-openai:v0", "state": {"waiting": {"reason": "ImagePullBackOff",
        ...     "message": "not found"}}}]}}
        >>> serving_status(dep, [pod]).state
        <ServingState.IMAGE_PULL_FAILED: 'ImagePullFailed'>
    """
    spec = server.get("spec") or {}
    status = server.get("status") or {}
    desired = int(spec.get("replicas", 1))
    ready = int(status.get("readyReplicas") or 0)

    def out(state: ServingState, reason: str, message: str) -> ServingStatus:
        return ServingStatus(state, reason, message, ready, desired)

    if desired == 0:
        return out(ServingState.STOPPED, "ScaledToZero", "0 replicas desired")
    progress = f"{ready}/{desired} replicas ready"
    rollout = _rollout_pending(server, desired)
    if rollout is None:
        return out(ServingState.READY, "Available", progress)
    found = [d for d in (_diagnose(pod) for pod in pods) if d is not None]
    if found:
        state, reason, message = min(found, key=lambda d: _RANK[d[0]])
        return out(state, reason, f"{progress}; {message}")
    failure = condition(server, "ReplicaFailure")
    if failure is not None and failure.get("status") == "True":
        why = f"{progress}; cannot create pods: {failure.get('message', '')}"
        return out(ServingState.CREATE_FAILED, str(failure.get("reason", "")), why)
    return out(ServingState.ROLLING_OUT, rollout[0], f"{progress}; {rollout[1]}")


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
    """What was answered between two reads (a counter that went down restarted: counted from 0),
    with the p95 latency interpolated from the buckets as PromQL's `histogram_quantile` does.

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


def _rollout_pending(server: ObjView, desired: int) -> tuple[str, str] | None:
    """(reason, message) while the rollout is incomplete, None when every replica serves."""
    meta = server.get("metadata") or {}
    status = server.get("status") or {}
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        return "NotObserved", "the controller has not processed the latest spec yet"
    updated = int(status.get("updatedReplicas") or 0)
    if server.get("kind") == "LeaderWorkerSet":
        if is_true(server, "Available") and int(status.get("readyReplicas") or 0) >= desired:
            return None
        return "GroupsNotReady", "waiting for every leader/worker group to be ready"
    progressing = condition(server, "Progressing") or {}
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return "ProgressDeadlineExceeded", str(progressing.get("message", ""))
    if updated < desired:
        return "RollingOut", f"{updated}/{desired} replicas updated"
    if int(status.get("replicas") or 0) > updated:
        return "RollingOut", "old replicas are still terminating"
    if int(status.get("availableReplicas") or 0) < desired:
        return "NotAvailable", "new replicas are not available yet"
    return None


def _diagnose(pod: ObjView) -> tuple[ServingState, str, str] | None:
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp") or is_true(pod, "Ready"):
        return None  # serving, or going away (its replacement tells the story)
    name = meta.get("name", "?")
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    if status.get("phase") == "Failed" or is_true(pod, "DisruptionTarget"):
        why = status.get("message") or (condition(pod, "DisruptionTarget") or {}).get("message")
        return (
            ServingState.DISRUPTED,
            str(status.get("reason") or "Disrupted"),
            (
                f"pod {name} was evicted or preempted ({why or 'node going away'}); a replacement "
                "starts and reloads the model"
            ),
        )
    if any(g.get("name") == _KUEUE_GATE for g in spec.get("schedulingGates") or []):
        queue = (meta.get("labels") or {}).get("kueue.x-k8s.io/queue-name", "?")
        return (
            ServingState.QUEUED,
            "SchedulingGated",
            f"pod {name} waits for Kueue admission in queue {queue}",
        )
    for cs in [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]:
        found = _container_problem(name, cs)
        if found is not None:
            return found
    scheduled = condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        return _unschedulable(name, spec, scheduled)
    if status.get("phase") == "Pending":
        return (
            ServingState.PENDING,
            "ContainerCreating",
            (f"pod {name} is pulling the image or mounting volumes"),
        )
    if status.get("phase") == "Running" and not is_true(pod, "Ready"):
        started = all(cs.get("started") for cs in status.get("containerStatuses") or [])
        what = "failing its readiness probe" if started else "loading the model (startup probe)"
        return ServingState.STARTING, "NotReady", f"pod {name} is {what}"
    return None


def _container_problem(pod: str, cs: ObjView) -> tuple[ServingState, str, str] | None:
    state = cs.get("state") or {}
    waiting = state.get("waiting") or {}
    last = (cs.get("lastState") or {}).get("terminated") or state.get("terminated") or {}
    reason = str(waiting.get("reason") or "")
    detail = waiting.get("message") or ""
    container, restarts = cs.get("name", "?"), int(cs.get("restartCount") or 0)
    if reason in _CONFIG:
        return (
            ServingState.CONFIG_ERROR,
            reason,
            (
                f"pod {pod}: {detail or reason}; check that the Secret named by hf_token_secret "
                "(and its key) exists in the namespace"
            ),
        )
    if reason in _IMAGE_PULL:
        return (
            ServingState.IMAGE_PULL_FAILED,
            reason,
            (f"pod {pod} cannot pull {cs.get('image', 'the image')}: {detail or reason}"),
        )
    if last.get("reason") == "OOMKilled":
        return (
            ServingState.OUT_OF_MEMORY,
            "OOMKilled",
            (
                f"container {container} of pod {pod} ran out of host memory ({restarts} restarts); "
                "loading weights or /dev/shm needs more node memory than the pod may use"
            ),
        )
    if reason == "CrashLoopBackOff" or (last and int(last.get("exitCode") or 0) != 0):
        code = last.get("exitCode", "?")
        return (
            ServingState.CRASHING,
            reason or "Error",
            (
                f"container {container} of pod {pod} exits with code {code} ({restarts} restarts); "
                "its logs tell why: 'CUDA out of memory' or 'not enough KV cache' means a smaller "
                "max_model_len or gpu_memory_utilization, or more GPUs per replica"
            ),
        )
    return None


def _unschedulable(pod: str, spec: ObjView, scheduled: ObjView) -> tuple[ServingState, str, str]:
    message = str(scheduled.get("message", ""))
    # No hardware object here: the pod's own selector and requests, read with the catalog's
    # label keys and resource names.
    selector = spec.get("nodeSelector") or {}
    labels = accelerator_labels()
    label = next((key for key in labels if key in selector), labels[0])
    gpu_type = selector.get(label, "")
    resource = next((r for r in accelerator_resources() if f"Insufficient {r}" in message), None)
    if resource is not None:
        gpus = sum(
            int(((c.get("resources") or {}).get("limits") or {}).get(resource) or 0)
            for c in spec.get("containers") or []
        )
        why = (
            f"no node has {gpus} free {resource} of type {gpu_type}; GKE adds a node if a "
            "node pool of that type can grow, otherwise add capacity or use fewer GPUs per replica"
        )
    elif "node affinity/selector" in message:
        why = (
            f"no node carries {label}={gpu_type}: create a node pool with that GPU "
            "(or enable node auto-provisioning)"
        )
    elif "untolerated taint" in message:
        why = "the nodes carry taints the pod does not tolerate"
    else:
        why = "no node fits"
    return (
        ServingState.UNSCHEDULABLE,
        str(scheduled.get("reason", "Unschedulable")),
        (f"pod {pod}: {why} ({message})" if message else f"pod {pod}: {why}"),
    )


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
