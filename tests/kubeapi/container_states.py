"""Pod statuses the way kubelet reports them while a pod's init containers and app container
run and after one of them failed (`ProcessKubelet`)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
_LOG_TAIL_LINES, _LOG_TAIL_BYTES = 80, 2048  # kubelet's FallbackToLogsOnError message


def pod_status(phase: str, name: str, app: str, done: str | None = None) -> Obj:
    """A pod's status while container `name` runs after init container `done`: the app
    container waits to start until `name` is the app container."""
    running = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
    inits = [{"name": done, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]
    inits = inits if done else []
    if name == app:
        return {
            "phase": phase,
            "initContainerStatuses": inits,
            "containerStatuses": [{"name": app, "state": running}],
        }
    return {
        "phase": phase,
        "initContainerStatuses": [*inits, {"name": name, "state": running}],
        "containerStatuses": [{"name": app, "state": {"waiting": {"reason": "PodInitializing"}}}],
    }


def failed_status(container: str, code: int, message: str, app: str) -> Obj:
    """A Failed pod's status: `container` terminated with `code` (an init container: the app
    container then never started)."""
    terminated: Obj = {"exitCode": code, "reason": "Error"}
    if message:
        terminated["message"] = message
    failed = {"name": container, "state": {"terminated": terminated}}
    if container == app:
        return {"phase": "Failed", "containerStatuses": [failed]}
    return {
        "phase": "Failed",
        "initContainerStatuses": [failed],
        "containerStatuses": [{"name": app, "state": {"waiting": {"reason": "PodInitializing"}}}],
    }


def log_tail(log: str) -> str:
    """What kubelet makes a FallbackToLogsOnError container's termination message."""
    return "\n".join(log.splitlines()[-_LOG_TAIL_LINES:])[-_LOG_TAIL_BYTES:]
