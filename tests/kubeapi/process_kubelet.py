"""`ProcessKubelet`: plays the JobSet and Job controllers and the kubelet for the JobSets of one
namespace, running every pod's first container as a process on this machine.

What it follows (the recordings in ../shared/fixtures/kueue-real show each step):
- an unsuspended JobSet gets one pod per (Job index, completion index), labelled and annotated
  as JobSet (`pkg/controllers/jobset_controller.go`, labels and annotations on child Jobs and
  pods) and the Job controller (`batch.kubernetes.io/job-completion-index`) do; a pod that
  succeeded is never created again (the Job keeps its completed indexes);
- a suspended JobSet (Kueue preemption or deactivation) or a deleted one loses its running
  pods: the process is killed and the pod deleted, as the Job controller deletes the active
  pods of a suspended Job; re-admission creates new pods with new UIDs;
- when every pod succeeded the JobSet gets `Completed=True/AllJobsCompleted`.
The container runs as the kubelet runs it: its env resolved with the downward API and
`$(VAR)` expansion (tests/pod_env.py), `python`/`python3` being this interpreter, volumes
mapped to folders under `root` (a GCS FUSE bucket folder `gcs/<bucket>/<only-dir>`, a claim
`pvc/<claim>/<subPath>`, an emptyDir and a ConfigMap per pod), mount paths in env values,
command and working directory rewritten to those folders. Not modelled: pod failures and
their restarts (JobSet failure policy), Workloads (the test plays Kueue from the recordings),
networking between pods (MASTER_ADDR stays a name nothing resolves)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.pod_env import container_argv, container_env, jobset_pod_metadata

from .objects import new_uid
from .server import KubeAPIServer

Obj = dict[str, Any]
_PYTHONS = ("python", "python3")


class ProcessKubelet(threading.Thread):
    def __init__(self, server: KubeAPIServer, namespace: str, root: Path) -> None:
        super().__init__(daemon=True, name="process-kubelet")
        self.server, self.namespace, self.root = server, namespace, root
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self.running: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}  # pod -> (jobset, p)
        self.succeeded: dict[str, set[tuple[int, int]]] = {}  # JobSet uid -> indexes
        self.started: list[str] = []  # pod names, in the order their processes started

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=10)
        with self._lock:
            for pod in list(self.running):
                self._kill(pod)

    def freeze(self, jobset: str) -> None:
        """Stop (SIGSTOP) the processes of `jobset`'s pods where they are, as a slow node
        would hold them, so the test decides what happens next; a later kill still ends them."""
        with self._lock:
            for owner, proc in self.running.values():
                if owner == jobset:
                    os.killpg(proc.pid, signal.SIGSTOP)

    def log(self, pod: str) -> str:
        """Everything the pod's process printed."""
        return (self.root / "logs" / f"{pod}.log").read_text()

    def run(self) -> None:
        store = self.server.store
        while not self._stop_event.is_set():
            with store.changed:
                store.changed.wait(0.02)
            with self._lock:
                jobsets = {j["metadata"]["name"]: j for j in store.list("jobsets", self.namespace)}
                for pod, (owner, _) in list(self.running.items()):
                    jobset = jobsets.get(owner)
                    if jobset is None or _stopping(jobset):
                        self._kill(pod)
                self._reap(jobsets)
                for jobset in jobsets.values():
                    if not _stopping(jobset) and not _completed(jobset):
                        self._start_missing(jobset)

    def _start_missing(self, jobset: Obj) -> None:
        name, uid = jobset["metadata"]["name"], jobset["metadata"]["uid"]
        replicated = jobset["spec"]["replicatedJobs"][0]
        spec = replicated["template"]["spec"]
        live = {
            (int(p["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"]),
             int(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]))
            for p in self.server.store.list("pods", self.namespace)
            if p["metadata"]["labels"].get("jobset.sigs.k8s.io/jobset-name") == name
            and p["metadata"]["name"] in self.running
        }  # fmt: skip
        done = self.succeeded.setdefault(uid, set())
        for job_index in range(replicated["replicas"]):
            for index in range(spec["completions"]):
                if (job_index, index) not in live | done:
                    self._start(jobset, spec["template"], job_index, index)

    def _start(self, jobset: Obj, template: Obj, job_index: int, index: int) -> None:
        metadata = jobset_pod_metadata(jobset, job_index, index, new_uid())
        metadata["labels"]["jobset.sigs.k8s.io/jobset-name"] = jobset["metadata"]["name"]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {**template["spec"], "nodeName": "node-1"},
            "status": {"phase": "Running"},
        }
        pod = self.server.store.put(pod)
        name = pod["metadata"]["name"]
        containers = pod["spec"]["containers"]
        container = next((c for c in containers if c["name"] == "trainer"), containers[0])
        folders = self._mounts(pod, container)
        env = {k: _local(v, folders) for k, v in container_env(container, pod["metadata"]).items()}
        argv = [_local(a, folders) for a in container_argv(container, env)]
        argv = [sys.executable if a in _PYTHONS else a for a in argv[:1]] + argv[1:]
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        logs = self.root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{name}.log", "wb") as out:
            proc = subprocess.Popen(
                argv, env=env, cwd=_local(container.get("workingDir", "/"), folders),
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self.running[name] = (jobset["metadata"]["name"], proc)
        self.started.append(name)

    def _mounts(self, pod: Obj, container: Obj) -> dict[str, Path]:
        """Mount path -> local folder for every volume mount of the container."""
        name = pod["metadata"]["name"]
        sources: dict[str, Path] = {}
        for volume in pod["spec"].get("volumes") or []:
            folder = self.root / "pods" / name / volume["name"]
            if "csi" in volume:
                attributes = volume["csi"]["volumeAttributes"]
                options = dict(
                    o.partition("=")[::2] for o in attributes.get("mountOptions", "").split(",")
                )
                folder = self.root / "gcs" / attributes["bucketName"] / options.get("only-dir", "")
            elif "persistentVolumeClaim" in volume:
                folder = self.root / "pvc" / volume["persistentVolumeClaim"]["claimName"]
            elif "configMap" in volume:
                self._config_map(volume["configMap"], folder)
            folder.mkdir(parents=True, exist_ok=True)
            sources[volume["name"]] = folder
        mounts = {}
        for mount in container.get("volumeMounts") or []:
            folder = sources[mount["name"]] / mount.get("subPath", "")
            folder.mkdir(parents=True, exist_ok=True)
            mounts[mount["mountPath"]] = folder
        return mounts

    def _config_map(self, source: Obj, folder: Path) -> None:
        config_map = self.server.store.get("configmaps", self.namespace, source["name"])
        assert config_map is not None, f"ConfigMap {source['name']} is missing"
        data = config_map.get("data") or {}
        for item in source.get("items") or [{"key": k, "path": k} for k in data]:
            path = folder / item["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(data[item["key"]])

    def _kill(self, pod: str) -> None:
        _, proc = self.running.pop(pod)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        self.server.store.delete("pods", self.namespace, pod)

    def _reap(self, jobsets: dict[str, Obj]) -> None:
        store = self.server.store
        for pod_name, (owner, proc) in list(self.running.items()):
            code = proc.poll()
            if code is None:
                continue
            del self.running[pod_name]
            pod = store.get("pods", self.namespace, pod_name)
            self.server.set_pod_log(self.namespace, pod_name, self.log(pod_name))
            if pod is None:
                continue
            pod["status"] = {"phase": "Succeeded" if code == 0 else "Failed"}
            store.put(pod)
            jobset = jobsets.get(owner)
            if code != 0 or jobset is None:
                continue
            labels = pod["metadata"]["labels"]
            done = self.succeeded.setdefault(jobset["metadata"]["uid"], set())
            done.add((int(labels["jobset.sigs.k8s.io/job-index"]),
                      int(labels["batch.kubernetes.io/job-completion-index"])))  # fmt: skip
            replicated = jobset["spec"]["replicatedJobs"][0]
            if len(done) == replicated["replicas"] * replicated["template"]["spec"]["completions"]:
                self._complete(jobset)

    def _complete(self, jobset: Obj) -> None:
        # The JobSet status of the recordings' successful runs (jobset-succeeded, t=2.22).
        status = jobset.get("status") or {}
        conditions = [c for c in status.get("conditions") or [] if c["type"] != "Completed"]
        conditions.append({
            "type": "Completed", "status": "True", "reason": "AllJobsCompleted",
            "message": "jobset completed successfully",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        })  # fmt: skip
        current = self.server.store.get("jobsets", self.namespace, jobset["metadata"]["name"])
        if current is not None:
            current["status"] = {**status, "conditions": conditions, "terminalState": "Completed"}
            self.server.store.put(current)


def _stopping(jobset: Obj) -> bool:
    return bool(jobset["spec"].get("suspend")) or bool(jobset["metadata"].get("deletionTimestamp"))


def _completed(jobset: Obj) -> bool:
    conditions = (jobset.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Completed" and c["status"] == "True" for c in conditions)


def _local(value: str, mounts: dict[str, Path]) -> str:
    """`value` with a container path under a mount replaced by the mount's local folder."""
    for path in sorted(mounts, key=len, reverse=True):
        if value == path or value.startswith(path + "/"):
            return str(mounts[path]) + value[len(path) :]
    return value
