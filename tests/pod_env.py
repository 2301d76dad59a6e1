"""What the kubelet makes of a compiled container for one pod: the downward API values of its
env, `$(VAR)` references in env values and in the command expanded (Kubernetes
`third_party/forked/golang/expansion`: from the variables declared before, `$$` -> `$`,
undefined ones left as written), so tests can run a pod's command as the kubelet would."""

from __future__ import annotations

import re
from typing import Any

from gkeml_sdk.training.launcher import expand

_FIELD = re.compile(r"^metadata\.(labels|annotations)\['([^']+)'\]\Z")


def field_value(path: str, metadata: dict[str, Any]) -> str:
    """The value of a downward API `fieldRef.fieldPath` on a pod with `metadata`."""
    if path in ("metadata.uid", "metadata.name", "metadata.namespace"):
        return str(metadata[path.split(".", 1)[1]])
    match = _FIELD.match(path)
    assert match, f"no downward API field {path!r} in this test double"
    # A missing label or annotation is an empty string, as the kubelet gives it.
    return str((metadata.get(match[1]) or {}).get(match[2], ""))


def container_env(container: dict[str, Any], metadata: dict[str, Any]) -> dict[str, str]:
    """The container's declared env, resolved in order as the kubelet does."""
    env: dict[str, str] = {}
    for entry in container.get("env") or []:
        if "value" in entry:
            env[entry["name"]] = expand(entry["value"], env)
        else:
            ref = entry["valueFrom"]["fieldRef"]["fieldPath"]
            env[entry["name"]] = field_value(ref, metadata)
    return env


def container_argv(container: dict[str, Any], env: dict[str, str]) -> list[str]:
    """command + args with references to the declared env expanded."""
    return [expand(arg, env) for arg in [*container["command"], *container.get("args", [])]]


def jobset_pod_metadata(
    jobset: dict[str, Any], job_index: int, completion_index: int, uid: str
) -> dict[str, Any]:
    """The labels and annotations JobSet and the Job controller put on a pod (as on the pods of
    ../shared/fixtures/kueue-real), over the pod template's own."""
    replicated = jobset["spec"]["replicatedJobs"][0]
    template = replicated["template"]["spec"]["template"]["metadata"]
    name = jobset["metadata"]["name"]
    indices = {
        "jobset.sigs.k8s.io/job-index": str(job_index),
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(replicated["replicas"]),
        "jobset.sigs.k8s.io/restart-attempt": str((jobset.get("status") or {}).get("restarts", 0)),
        "batch.kubernetes.io/job-completion-index": str(completion_index),
    }
    return {
        "name": f"{name}-{replicated['name']}-{job_index}-{completion_index}-{uid[:5]}",
        "namespace": jobset["metadata"].get("namespace", "default"),
        "uid": uid,
        "labels": {**(template.get("labels") or {}), **indices},
        "annotations": {**(template.get("annotations") or {}), **indices},
    }


def job_pod_metadata(job: dict[str, Any], uid: str) -> dict[str, Any]:
    """The labels and annotations the Job controller puts on the pod of a one-pod Indexed Job."""
    template = job["spec"]["template"]["metadata"]
    index = {"batch.kubernetes.io/job-completion-index": "0"}
    return {
        "name": f"{job['metadata']['name']}-0-{uid[:5]}",
        "namespace": job["metadata"].get("namespace", "default"),
        "uid": uid,
        "labels": {**(template.get("labels") or {}), **index},
        "annotations": {**(template.get("annotations") or {}), **index},
    }
