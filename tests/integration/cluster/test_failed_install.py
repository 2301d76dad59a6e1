"""A run whose requirements do not install ends FAILED with its first pods, on the test API
server: the pods run as processes by tests/kubeapi/process_kubelet.py, which plays the Job
controller's podFailurePolicy and JobSet's failurePolicy as they are written in the compiled
JobSet; Kueue's admission is played from the recordings of a real control plane. The user's
own exit code 3 restarts the gang as any failure does."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import FailureCause, RunState, TrainingJob
from tests.kubeapi.process_kubelet import ProcessKubelet
from tests.tiny_wheel import tiny_wheel

from .conftest import queue
from .replay import Replayer

WATCHERS = 3  # the client's watches: JobSet, Workload, Pod
SUCCEEDED = "jobset-succeeded"  # `train`: admitted 1.28 (JobSet unsuspended)


def job_of(tmp: Path, command: str, requirement: str, **fields: Any) -> TrainingJob:
    wheels = tmp / "wheels"
    wheels.mkdir()
    tiny_wheel(wheels)
    pip = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_NO_CACHE_DIR": "1"}
    return TrainingJob(
        name="ft", image="python:3.12-slim", command=["python", "-c", command], nodes=2,
        requirements=[requirement], env=pip, namespace="ml", queue="team-a",
        checkpoint_dir="gs://ckpt/ft", **fields,
    )  # fmt: skip


def run_until_final(cluster: Any, client: Any, tmp: Path, job: TrainingJob) -> Any:
    """Submit `job`, admit it, and wait; the Job and JobSet controllers see a failed pod once
    the client saw it (as on a cluster, where they act a reconcile later). Returns the run,
    its final status, the kubelet and the statuses the client saw a failed pod in."""
    cluster.store.put(queue(job.queue))
    seen = threading.Event()
    kubelet = ProcessKubelet(cluster, "ml", tmp, release_failures=seen)
    kubelet.start()
    pod_failed: list[Any] = []

    def progress(status: Any) -> None:
        if status.reason == "PodFailed":
            pod_failed.append(status)
            seen.set()

    run = client.submit(job)
    admit = Replayer(cluster, "ml", job.name, 1, job.name)

    def kueue() -> None:
        admit.wait_for_watchers(WATCHERS)
        admit.play(SUCCEEDED, "train", until=1.4, kinds=("JobSet", "Workload"))

    thread = threading.Thread(target=kueue, daemon=True)
    thread.start()
    try:
        final = run.wait(timeout=120, progress=progress)
    finally:
        kubelet.stop()
        thread.join(timeout=10)
    return run, final, kubelet, pod_failed


@pytest.mark.parametrize("gang", [True, False], ids=["gang", "independent"])
def test_requirements_that_do_not_install_fail_the_run_with_its_first_pods(
    cluster, client, tmp_path, gang
):
    job = job_of(tmp_path, "pass", "gkemltiny==9.9", gang=gang, max_restarts=2)
    run, final, kubelet, _ = run_until_final(cluster, client, tmp_path, job)
    assert (final.state, final.cause) == (RunState.FAILED, FailureCause.USER_CODE)
    # One pod per node and no other: max_restarts=2 was not spent on the same install.
    assert len(kubelet.started) == 2, kubelet.started
    assert final.reason == "FailJobSetFailurePolicyAction"
    assert "bootstrap exited with code 3 (Error): ERROR: No matching distribution found " \
        "for gkemltiny==9.9" in final.message  # fmt: skip
    jobset = cluster.store.get("jobsets", "ml", "ft")
    assert jobset["status"].get("restarts", 0) == 0
    # The Job controller failed the Job by the bootstrap's rule (index 1), not by a budget.
    ((job_name, reason, message),) = kubelet.job_failures
    assert (job_name, reason) == ("ft-node-0", "PodFailurePolicy")
    assert re.fullmatch(r"Container bootstrap for pod ml/ft-node-0-\d-\w+ failed with exit code 3 "
                        r"matching FailJob rule at index 1", message), message  # fmt: skip
    # The first bootstrap to fail ended the JobSet: the other may have been stopped mid-install.
    bootstraps = [kubelet.log(pod, "bootstrap") for pod in kubelet.started]
    assert any("gkeml: pip could not install" in log for log in bootstraps), bootstraps
    for pod in kubelet.started:
        assert not (tmp_path / "logs" / f"{pod}.log").exists()  # the trainer never started
    explained = run.explain()
    assert (
        "could not prepare its workspace: the bootstrap container exited with code 3 "
        "(ERROR: No matching distribution found for gkemltiny==9.9)" in explained.sentence
    )
    assert "without spending max_restarts" in explained.sentence  # fmt: skip
    logs = list(run.logs())
    assert any("No matching distribution found for gkemltiny==9.9" in line for line in logs)
    assert all(line.startswith(("[0] ", "[1] ")) for line in logs)


def test_the_trainers_own_exit_3_restarts_the_gang_until_max_restarts(cluster, client, tmp_path):
    job = job_of(tmp_path, "import gkemltiny; raise SystemExit(3)", "gkemltiny", max_restarts=1)
    _, final, kubelet, pod_failed = run_until_final(cluster, client, tmp_path, job)
    assert (final.state, final.cause) == (RunState.FAILED, FailureCause.USER_CODE)
    assert final.reason == "ReachedMaxRestarts"
    assert "trainer exited with code 3" in pod_failed[0].message
    # Two attempts of two pods: the first restart was spent, the second refused.
    assert len(kubelet.started) == 4, kubelet.started
    jobset = cluster.store.get("jobsets", "ml", "ft")
    assert (jobset["status"]["restarts"], jobset["status"]["restartsCountTowardsMax"]) == (1, 1)
    # Each time by the gang's rule for the trainer's exit (index 2), then JobSet's restart rule.
    assert [(name, reason) for name, reason, _ in kubelet.job_failures] == [
        ("ft-node-0", "PodFailurePolicy"),
        ("ft-node-0", "PodFailurePolicy"),
    ]
    assert all(m.startswith("Container trainer ") and m.endswith("rule at index 2")
               for _, _, m in kubelet.job_failures)  # fmt: skip
    installs = [kubelet.log(p, "bootstrap") for p in kubelet.started]
    assert sum(log.count("gkeml: installing requirements") for log in installs) == 1
    assert sum(log.count("gkeml: requirements from the cache") for log in installs) == 3
