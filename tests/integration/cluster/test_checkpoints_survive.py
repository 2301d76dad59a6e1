"""The quickstart and the README's Spot job keep their checkpoints across a Kueue preemption
and a resubmission: Kueue and JobSet status played from the recordings of a real control
plane, the pods run as processes by tests/kubeapi/process_kubelet.py, the resubmission made by
the client's follow loop under a RetryPolicy."""

from __future__ import annotations

import importlib.util
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from gkeml_sdk import RetryPolicy, RunState, SpecError, TrainingJob
from gkeml_sdk.core.environment import STARTS_DIR
from tests.cloud_storage import cloud_storage
from tests.kubeapi.process_kubelet import ProcessKubelet
from tests.tiny_wheel import tiny_wheel

from .conftest import queue
from .replay import Replayer

ROOT = Path(__file__).resolve().parents[3]
WATCHERS = 3  # the client's watches: JobSet, Workload, Pod
PREEMPTED = "jobset-preempted-requeued-succeeded"  # `low`: admitted 1.06, preempted 1.48,
# re-admitted 2.6 (JobSet unsuspended 2.61)
DEACTIVATED = "jobset-podsready-timeout-deactivated"  # `stuck`: deactivated from 63.79
SUCCEEDED = "jobset-succeeded"  # `train`: admitted 1.28, Workload finished 2.23


def quickstart_job() -> TrainingJob:
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / "examples/quickstart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    job: TrainingJob = module.job
    return job


def readme_spot_job() -> TrainingJob:
    """The README's Spot job, running the quickstart's training code (its image's train.py is
    not in this repository)."""
    code = re.findall(r"```python\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)[0]
    code = code.replace("print(", "(")  # the snippet prints its manifests and cost
    scope: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), scope)
    readme: TrainingJob = scope["job"]
    quickstart = quickstart_job()
    assert readme.spot and readme.max_restarts > 0 and readme.checkpoint_dir
    return readme.with_changes(command=quickstart.command, files=quickstart.files, namespace="ml")


def workdir_job(root: Path) -> TrainingJob:
    """The quickstart's code as a project folder (`workdir=`) that imports a requirement, built
    into a wheel here and installed by the launcher without an index."""
    quickstart = quickstart_job()
    folder = root / "project"
    folder.mkdir(parents=True)
    for rel, text in quickstart.files.items():
        (folder / rel).write_text(text)
    with (folder / "main.py").open("a") as main:
        main.write("\nimport gkemltiny  # installed by requirements=, before this start\n")
    wheels = folder.parent / "wheels"
    wheels.mkdir()
    tiny_wheel(wheels)
    pip = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "PIP_NO_CACHE_DIR": "1"}
    return quickstart.with_changes(
        files={}, workdir=str(folder), requirements=["gkemltiny"], env={**quickstart.env, **pip},
        namespace="ml",
    )  # fmt: skip


@contextmanager
def code_bucket(job: TrainingJob, root: Path, monkeypatch: Any) -> Iterator[None]:
    """For a job with a workdir: a loopback Cloud Storage holding the checkpoint bucket while
    the job is submitted, then its objects where the kubelet shows that bucket to the pods
    (as Cloud Storage FUSE does)."""
    if job.workdir is None:
        yield
        return
    assert job.checkpoint_dir is not None
    bucket = job.checkpoint_dir.removeprefix("gs://").split("/")[0]
    with cloud_storage(bucket) as storage:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", storage.url)
        yield
        assert storage.uploads == 1
        from google.cloud import storage as gcs

        for blob in gcs.Client().list_blobs(bucket):
            target = root / "gcs" / bucket / blob.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(blob.download_as_bytes())


def bucket_folder(root: Path, job: TrainingJob) -> Path:
    """Where the kubelet keeps the job's gs:// checkpoint folder."""
    assert job.checkpoint_dir and job.checkpoint_dir.startswith("gs://")
    return root / "gcs" / job.checkpoint_dir.removeprefix("gs://")


def wait_until(what: str, check: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return found


def steps(folder: Path) -> list[int]:
    return sorted(int(p.stem.split("-")[1]) for p in folder.glob("step-*.json"))


JOBS = {
    "quickstart": lambda root: quickstart_job(),
    "readme-spot": lambda root: readme_spot_job(),
    "workdir-requirements": workdir_job,
}


@pytest.mark.parametrize("kind", sorted(JOBS))
def test_checkpoints_survive_a_kueue_preemption_and_a_resubmission(
    cluster, client, tmp_path, kind, monkeypatch
):
    job = JOBS[kind](tmp_path / "source")
    cluster.store.put(queue(job.queue))
    kubelet = ProcessKubelet(cluster, "ml", tmp_path)
    kubelet.start()
    checkpoints = bucket_folder(tmp_path, job)
    name = job.name
    with code_bucket(job, tmp_path, monkeypatch):
        run = client.submit(job, retry=RetryPolicy(max_resubmits=1, backoff_seconds=0.05))
    first = Replayer(cluster, "ml", name, 1, name)
    kinds = ("JobSet", "Workload")

    def kueue() -> None:
        first.wait_for_watchers(WATCHERS)
        first.play(PREEMPTED, "low", until=1.3, kinds=kinds)  # admitted: pods start
        wait_until("a first checkpoint", lambda: steps(checkpoints))
        kubelet.freeze(name)  # hold the pods there while Kueue preempts them
        first.play(PREEMPTED, "low", since=1.3, until=2.7, kinds=kinds)  # preempted, re-admitted
        wait_until("the re-admitted rank 0", lambda: len(kubelet.started) >= 4)
        resumed_from = steps(checkpoints)[-1]
        wait_until(
            "a checkpoint after the preemption", lambda: steps(checkpoints)[-1] > resumed_from
        )
        kubelet.freeze(name)
        # Kueue deactivates the same Workload (its requeuing limit, as recorded for `stuck`).
        first.play(DEACTIVATED, "stuck", since=63.7, kinds=kinds,
                   rename={"jobset-stuck-94b81": f"jobset-{name}-f8c8b"})  # fmt: skip

    second = Replayer(cluster, "ml", name, 2, f"{name}--r2")

    def kueue_for_attempt_2() -> None:
        second.play(SUCCEEDED, "train", until=1.4, kinds=kinds)  # admitted: pods start
        done = lambda: cluster.store.get("jobsets", "ml", f"{name}--r2")  # noqa: E731
        wait_until("attempt 2 to complete", lambda: "terminalState" in done().get("status", {}))
        second.play(SUCCEEDED, "train", since=2.2, kinds=("Workload",))  # Workload finished

    threads = [threading.Thread(target=kueue, daemon=True)]

    def on_status(status: Any) -> None:
        if status.reason == "Resubmitted":
            threads.append(threading.Thread(target=kueue_for_attempt_2, daemon=True))
            threads[-1].start()

    threads[0].start()
    try:
        final = run.wait(timeout=120, progress=on_status)
    finally:
        kubelet.stop()
    for thread in threads:
        thread.join(timeout=10)
    assert final.state is RunState.SUCCEEDED, final
    assert run.attempt == 2
    # 2 pods, 2 re-admitted after the preemption, 2 of the resubmitted JobSet.
    pods = kubelet.started
    assert len(pods) == 6, pods
    assert all(p.startswith(f"{name}--r2-") for p in pods[4:])
    rank0 = [p for p in pods if re.match(rf"{re.escape(name)}(--r2)?-node-0-0-", p)]
    logs = [kubelet.log(p) for p in rank0]
    assert "resumed" not in logs[0]
    resumed = [re.search(r"resumed from step (\d+) \(restart (\d+)\)", log) for log in logs[1:]]
    assert all(resumed), logs
    (after_preemption, after_resubmission) = [(int(m[1]), int(m[2])) for m in resumed if m]
    assert after_preemption[0] > 0 and after_preemption[1] == 1
    assert after_resubmission[0] > after_preemption[0] and after_resubmission[1] == 2
    # Both ranks of attempt 2 end with the same model, trained to the last step.
    finals = {re.findall(r"done: .*", kubelet.log(p))[-1] for p in pods[4:]}
    assert len(finals) == 1, finals
    assert steps(checkpoints)[-1] == 40
    # One start mark per pod of each rank, kept in the bucket with the checkpoints.
    assert [len(list((checkpoints / STARTS_DIR / r).iterdir())) for r in "01"] == [3, 3]
    if job.requirements is not None:
        # The first two pods share one install; the re-admitted and resubmitted ones find it.
        # Their bootstrap init containers did it, before the trainers started.
        logs = [kubelet.log(p, "bootstrap") for p in pods]
        assert not any("gkeml: " in kubelet.log(p) for p in pods)
        assert sum(log.count("gkeml: installing requirements") for log in logs) == 1
        assert sum(log.count("gkeml: requirements from the cache") for log in logs) == 5


def test_a_spot_job_without_durable_checkpoints_is_refused_before_anything_is_written(
    cluster, client
):
    job = readme_spot_job().with_changes(checkpoint_dir=None)
    cluster.clear_request_log()
    with pytest.raises(SpecError) as caught:
        client.submit(job)
    assert "gs://BUCKET/PATH" in str(caught.value) and "stateless=True" in str(caught.value)
    assert cluster.count() == 0
    client.submit(job.with_changes(stateless=True))  # says it keeps no state: accepted
