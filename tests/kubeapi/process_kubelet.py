"""`ProcessKubelet`: plays the JobSet and Job controllers and the kubelet for the JobSets of one
namespace, running every pod's init containers (sidecars aside) one after the other and then its
`trainer` (else first) container as processes on this machine.

What it follows (the recordings in ../shared/fixtures/kueue-real show each step):
- an unsuspended JobSet gets one pod per (Job index, completion index), labelled and annotated
  as JobSet (`pkg/controllers/jobset_controller.go`, labels and annotations on child Jobs and
  pods) and the Job controller (`batch.kubernetes.io/job-completion-index`) do; a pod that
  succeeded is never created again (the Job keeps its completed indexes);
- a suspended JobSet (Kueue preemption or deactivation) or a deleted one loses its running
  pods: the process is killed and the pod deleted, as the Job controller deletes the active
  pods of a suspended Job; re-admission creates new pods with new UIDs;
- when every pod succeeded the JobSet gets `Completed=True/AllJobsCompleted`;
- a failed pod (an init container or the app container exiting non-zero; the pod Failed with
  the kubelet's container statuses, a FallbackToLogsOnError container's log tail as its
  termination message) goes through the Job's podFailurePolicy and retry budget and, once
  its Job failed, the JobSet's failurePolicy (job_failures.py): a pod of an index that may
  retry is made again, a failed Job's pods are stopped, a restarted JobSet gets
  `status.restarts` + 1 and new pods with that restart attempt, a failed one
  `Failed=True` with JobSet's reason and message and `terminalState: Failed`. With
  `release_failures`, the controllers see failed pods only once the event is set (a test
  sets it once its client saw them: on a cluster the Job fails a reconcile after its pod).
A container runs as the kubelet runs it: its env resolved with the downward API and
`$(VAR)` expansion (tests/pod_env.py), `python`/`python3` being this interpreter, volumes
mapped to folders under `root` (a GCS FUSE bucket folder `gcs/<bucket>/<only-dir>`, a claim
`pvc/<claim>/<subPath>`, an emptyDir and a ConfigMap per pod), mount paths in env values,
command and working directory rewritten to those folders. Not modelled: sidecar init
containers (restartPolicy Always), a container's restarts in place, child Job objects (the
Jobs' state is kept here), Workloads (the test plays Kueue from the recordings), networking
between pods (MASTER_ADDR stays a name nothing resolves)."""

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

from .container_states import failed_status, log_tail, pod_status
from .job_failures import job_failure, jobset_failure_action, pod_failure_action
from .objects import new_uid
from .server import KubeAPIServer

Obj = dict[str, Any]
_PYTHONS = ("python", "python3")


class ProcessKubelet(threading.Thread):
    def __init__(
        self,
        server: KubeAPIServer,
        namespace: str,
        root: Path,
        release_failures: threading.Event | None = None,
    ) -> None:
        super().__init__(daemon=True, name="process-kubelet")
        self.server, self.namespace, self.root = server, namespace, root
        self.release_failures = release_failures
        self._held: list[tuple[Obj, Obj]] = []  # (JobSet, pod) failures the controllers wait for
        self._stop_event = threading.Event()
        self._lock = threading.Lock()
        self.running: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}  # pod -> (jobset, p)
        self.succeeded: dict[str, set[tuple[int, int]]] = {}  # JobSet uid -> indexes
        self.started: list[str] = []  # pod names, in the order their processes started
        # pod -> its containers still to run after the one running, and that one
        self._next: dict[str, list[Obj]] = {}
        self._current: dict[str, Obj] = {}
        # (JobSet uid, restart attempt) -> its Jobs' counted pod failures, per Job and per
        # (Job, index), and the Jobs that failed
        self._failures: dict[tuple[str, int], dict[object, int]] = {}
        self._failed_jobs: dict[tuple[str, int], set[int]] = {}
        # The child Jobs that failed, in order: (name, reason, message of their Failed condition)
        self.job_failures: list[tuple[str, str, str]] = []

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

    def log(self, pod: str, container: str | None = None) -> str:
        """Everything the pod's app container (or its init container `container`) printed."""
        name = f"{pod}.{container}.log" if container else f"{pod}.log"
        return (self.root / "logs" / name).read_text()

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
                release = self.release_failures
                while self._held and (release is None or release.is_set()):
                    self._pod_failed(*self._held.pop(0))
                # Read again: a failed pod may have failed or restarted its JobSet.
                jobsets = {j["metadata"]["name"]: j for j in store.list("jobsets", self.namespace)}
                for jobset in jobsets.values():
                    if not _stopping(jobset) and not _finished(jobset):
                        self._start_missing(jobset)

    def _start_missing(self, jobset: Obj) -> None:
        name, uid = jobset["metadata"]["name"], jobset["metadata"]["uid"]
        replicated = jobset["spec"]["replicatedJobs"][0]
        spec = replicated["template"]["spec"]
        # A failed pod the Job controller has not seen yet is not replaced yet either.
        held = {pod["metadata"]["name"] for _, pod in self._held}
        live = {
            (int(p["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"]),
             int(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]))
            for p in self.server.store.list("pods", self.namespace)
            if p["metadata"]["labels"].get("jobset.sigs.k8s.io/jobset-name") == name
            and (p["metadata"]["name"] in self.running or p["metadata"]["name"] in held)
        }  # fmt: skip
        done = self.succeeded.setdefault(uid, set())
        failed = self._failed_jobs.get((uid, _restarts(jobset)), set())
        for job_index in range(replicated["replicas"]):
            if job_index in failed:
                continue
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
        containers = pod["spec"]["containers"]
        app = next((c for c in containers if c["name"] == "trainer"), containers[0])
        inits = [
            c for c in pod["spec"].get("initContainers") or [] if c.get("restartPolicy") != "Always"
        ]
        if inits:
            pod["status"] = pod_status("Pending", inits[0]["name"], app["name"])
        pod = self.server.store.put(pod)
        name = pod["metadata"]["name"]
        self._next[name] = [*inits, app][1:]
        self._run(pod, [*inits, app][0], jobset["metadata"]["name"])
        self.started.append(name)

    def _run(self, pod: Obj, container: Obj, owner: str) -> None:
        """Start `container` of `pod` as a process."""
        name = pod["metadata"]["name"]
        folders = self._mounts(pod, container)
        env = {k: _local(v, folders) for k, v in container_env(container, pod["metadata"]).items()}
        argv = [_local(a, folders) for a in container_argv(container, env)]
        argv = [sys.executable if a in _PYTHONS else a for a in argv[:1]] + argv[1:]
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        logs = self.root / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        app = not self._next.get(name)  # the last to run: the app container
        with open(
            logs / (f"{name}.log" if app else f"{name}.{container['name']}.log"), "wb"
        ) as out:
            proc = subprocess.Popen(
                argv, env=env, cwd=_local(container.get("workingDir", "/"), folders),
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self.running[name] = (owner, proc)
        self._current[name] = container

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
        self._next.pop(pod, None)
        self._current.pop(pod, None)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        self.server.store.delete("pods", self.namespace, pod)

    def _reap(self, jobsets: dict[str, Obj]) -> None:
        store = self.server.store
        for pod_name, (owner, proc) in list(self.running.items()):
            code = proc.poll()
            if code is None or pod_name not in self.running:  # or killed by a failure here
                continue
            del self.running[pod_name]
            container = self._current.pop(pod_name)
            remaining = self._next.pop(pod_name, [])
            init = container["name"] if remaining else None  # the app container runs last
            text = self.log(pod_name, init)
            self.server.set_pod_log(self.namespace, pod_name, text, init)
            pod = store.get("pods", self.namespace, pod_name)
            if pod is None:
                continue
            jobset = jobsets.get(owner)
            app = remaining[-1]["name"] if remaining else container["name"]
            if code == 0 and remaining:  # an init container done: the next one starts
                phase = "Running" if len(remaining) == 1 else "Pending"
                pod["status"] = pod_status(phase, remaining[0]["name"], app, done=init)
                pod = store.put(pod)
                self._next[pod_name] = remaining[1:]
                self._run(pod, remaining[0], owner)
                continue
            pod["status"] = {"phase": "Succeeded" if code == 0 else "Failed"}
            if code != 0:
                fallback = container.get("terminationMessagePolicy") == "FallbackToLogsOnError"
                message = log_tail(text) if fallback else ""
                pod["status"] = failed_status(container["name"], code, message, app)
            store.put(pod)
            if jobset is None:
                continue
            if code != 0:
                self._held.append((jobset, pod))
                continue
            labels = pod["metadata"]["labels"]
            done = self.succeeded.setdefault(jobset["metadata"]["uid"], set())
            done.add((int(labels["jobset.sigs.k8s.io/job-index"]),
                      int(labels["batch.kubernetes.io/job-completion-index"])))  # fmt: skip
            replicated = jobset["spec"]["replicatedJobs"][0]
            if len(done) == replicated["replicas"] * replicated["template"]["spec"]["completions"]:
                self._complete(jobset)

    def _pod_failed(self, owner: Obj, pod: Obj) -> None:
        """The Job controller's answer to a failed pod, then JobSet's to a failed Job."""
        jobset = self.server.store.get("jobsets", self.namespace, owner["metadata"]["name"])
        if jobset is None or _finished(jobset):
            return
        attempt_label = pod["metadata"]["labels"].get("jobset.sigs.k8s.io/restart-attempt")
        if attempt_label != str(_restarts(jobset)):
            return  # a pod of a Job an earlier restart deleted: JobSet no longer counts it
        replicated = jobset["spec"]["replicatedJobs"][0]
        spec = replicated["template"]["spec"]
        labels = pod["metadata"]["labels"]
        job_index = int(labels["jobset.sigs.k8s.io/job-index"])
        index = int(labels["batch.kubernetes.io/job-completion-index"])
        action, message = pod_failure_action(spec.get("podFailurePolicy"), pod)
        if action == "Ignore":
            return  # made again by the next pass, not counted
        attempt = (jobset["metadata"]["uid"], _restarts(jobset))
        counts = self._failures.setdefault(attempt, {})
        failed: tuple[str, str] | None = ("PodFailurePolicy", message)
        if action == "FailIndex":
            failed = ("FailedIndexes", "Job has failed indexes")
        elif action != "FailJob":
            counts[job_index] = counts.get(job_index, 0) + 1
            counts[(job_index, index)] = counts.get((job_index, index), 0) + 1
            failed = job_failure(spec, counts[job_index], counts[(job_index, index)])
        if failed is None:
            return  # the index retries: made again by the next pass
        self._failed_jobs.setdefault(attempt, set()).add(job_index)
        name = jobset["metadata"]["name"]
        job_name = f"{name}-{replicated['name']}-{job_index}"
        self.job_failures.append((job_name, *failed))
        # A failed Job's active pods are terminated.
        self._kill_where(name, lambda p: p["metadata"]["labels"].get(
            "jobset.sigs.k8s.io/job-index") == str(job_index))  # fmt: skip
        action, verdict = jobset_failure_action(jobset, replicated["name"], *failed)
        current = jobset
        status = current.get("status") or {}
        if verdict is not None:
            self._kill_where(name, lambda p: True)
            reason, text = verdict
            condition = {
                "type": "Failed", "status": "True", "reason": reason,
                "message": f"{text} (first failed job: {job_name})",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }  # fmt: skip
            conditions = [c for c in status.get("conditions") or [] if c["type"] != "Failed"]
            current["status"] = {
                **status, "conditions": [*conditions, condition], "terminalState": "Failed"
            }  # fmt: skip
        else:  # a restart: every pod goes, new ones come with the next restart attempt
            self._kill_where(name, lambda p: True)
            self.succeeded.pop(jobset["metadata"]["uid"], None)
            counted = int(action == "RestartJobSet")
            current["status"] = {
                **status,
                "restarts": status.get("restarts", 0) + 1,
                "restartsCountTowardsMax": status.get("restartsCountTowardsMax", 0) + counted,
            }
        self.server.store.put(current)

    def _kill_where(self, jobset: str, chosen: Any) -> None:
        for pod_name, (owner, _) in list(self.running.items()):
            pod = self.server.store.get("pods", self.namespace, pod_name)
            if owner == jobset and pod is not None and chosen(pod):
                self._kill(pod_name)

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


def _finished(jobset: Obj) -> bool:
    conditions = (jobset.get("status") or {}).get("conditions") or []
    return any(c["type"] in ("Completed", "Failed") and c["status"] == "True" for c in conditions)


def _restarts(jobset: Obj) -> int:
    return int((jobset.get("status") or {}).get("restarts", 0))


def _local(value: str, mounts: dict[str, Path]) -> str:
    """`value` with a container path under a mount replaced by the mount's local folder."""
    for path in sorted(mounts, key=len, reverse=True):
        if value == path or value.startswith(path + "/"):
            return str(mounts[path]) + value[len(path) :]
    return value
