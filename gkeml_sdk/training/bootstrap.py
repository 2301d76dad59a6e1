"""The `bootstrap` init container of a job with a workdir or requirements, and the failure
rules that end the job when it cannot prepare the workspace. Preparing runs in a container of
its own so that its exit code (`training.launcher.PREPARE_FAILED`) cannot be mistaken for the
user's program exiting 3: a requirement that does not resolve fails the same way at every
start, so the Job fails at once (podFailurePolicy `FailJob`) and a JobSet does not restart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gkeml_sdk.core.environment import BOOTSTRAP_CONTAINER, BOOTSTRAP_FAILED, LAUNCHER_PYTHON
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.training.contract_env import launcher_source

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields

BOOTSTRAP = BOOTSTRAP_CONTAINER
# What the Job controller writes into the Failed condition for a FailJob rule matched by an
# exit code (kubernetes pkg/controller/job/pod_failure_policy.go); JobSet's
# onJobFailureMessagePatterns is matched against it (RE2, the same syntax here).
FAILED_MESSAGE = (
    f"^Container {BOOTSTRAP} for pod \\S+ failed with exit code {BOOTSTRAP_FAILED} "
    "matching FailJob rule at index [0-9]+$"
)
# Of the trainer's resources, what pip needs: an accelerator stays with the trainer.
_KEPT_RESOURCES = ("cpu", "memory", "ephemeral-storage")


def needs_bootstrap(job: TrainingJobFields) -> bool:
    """Whether the job's pods prepare a workspace before the trainer starts.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> needs_bootstrap(TrainingJob(name="a", command=["x"], requirements=["six"]))
        True
    """
    return job.workdir is not None or job.requirements is not None


def bootstrap_container(trainer: Obj) -> Obj:
    """The init container that unpacks the workdir and installs the requirements, with the
    trainer's image, environment, mounts and working directory: the trainer then finds both
    (the workspace an emptyDir they share, the virtual environment in the checkpoint folder).
    Its log's tail becomes its termination message, so pip's error is in the pod's status.

    Example:
        >>> c = bootstrap_container({"name": "trainer", "image": "i", "env": [],
        ...     "resources": {"requests": {"cpu": "4", "nvidia.com/gpu": "8"}}})
        >>> c["name"], c["command"][:2], c["resources"]
        ('bootstrap', ['python3', '-c'], {'requests': {'cpu': '4'}})
    """
    container: Obj = {"name": BOOTSTRAP}
    if "image" in trainer:
        container["image"] = trainer["image"]
    container["command"] = [LAUNCHER_PYTHON, "-c", launcher_source()]
    if "workingDir" in trainer:
        container["workingDir"] = trainer["workingDir"]
    container["env"] = _copy(trainer.get("env") or [])
    resources = {
        kind: kept
        for kind, amounts in (trainer.get("resources") or {}).items()
        if (kept := {k: v for k, v in amounts.items() if k in _KEPT_RESOURCES})
    }
    if resources:
        container["resources"] = resources
    if trainer.get("volumeMounts"):
        container["volumeMounts"] = _copy(trainer["volumeMounts"])
    container["terminationMessagePolicy"] = "FallbackToLogsOnError"
    return container


def bootstrap_pod_rule() -> Obj:
    """The podFailurePolicy rule that fails the Job when the bootstrap exits 3.

    Example:
        >>> bootstrap_pod_rule()["onExitCodes"]
        {'containerName': 'bootstrap', 'operator': 'In', 'values': [3]}
    """
    return {
        "action": "FailJob",
        "onExitCodes": {"containerName": BOOTSTRAP, "operator": "In", "values": [BOOTSTRAP_FAILED]},
    }


def bootstrap_jobset_rule() -> Obj:
    """The JobSet failurePolicy rule that fails the JobSet, without a restart, on a Job the
    bootstrap rule failed (other PodFailurePolicy failures still restart a gang).

    Example:
        >>> bootstrap_jobset_rule()["action"]
        'FailJobSet'
    """
    return {
        "name": "workspaceNotPrepared",
        "action": "FailJobSet",
        "onJobFailureReasons": ["PodFailurePolicy"],
        "onJobFailureMessagePatterns": [FAILED_MESSAGE],
    }


def _copy(value: Any) -> Any:
    # Compiled objects are the caller's to edit: none may be shared with the trainer's.
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
