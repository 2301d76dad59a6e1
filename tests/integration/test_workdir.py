"""A project folder from submit to the user's command, for real: packed, uploaded through
google-cloud-storage to a loopback Cloud Storage (counted there), compiled into pods whose
launcher unpacks the same hash and installs the requirements (from a hand-built wheel, never
an index) once per checkpoint folder; and the same project on the local backend."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gkeml_sdk import ConfigError, FailureCause, RunState, SpecError, TrainingJob
from gkeml_sdk.backends.code_bucket import ship_workdir
from gkeml_sdk.backends.local import LocalBackend, LocalOptions
from gkeml_sdk.core import environment as c
from tests.cloud_storage import cloud_storage
from tests.local_runs import submit
from tests.pod_env import container_argv, container_env, job_pod_metadata
from tests.tiny_wheel import tiny_wheel

SHOW = """
import json, os, pathlib, sys
files = sorted(str(p) for p in pathlib.Path(".").rglob("*") if p.is_file())
import gkemltiny, models.net, data_utils.load
blob = pathlib.Path("assets/tokenizer.bin").read_bytes()
print(json.dumps({"cwd": os.getcwd(), "files": files, "tiny": gkemltiny.VALUE,
                  "blob": len(blob), "python": sys.executable}))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A 5 MB project: two packages, a binary file, a requirements file, an ignored folder."""
    root = tmp_path / "project"
    for package in ("models", "data_utils"):
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "models" / "net.py").write_text("LAYERS = 4\n")
    (root / "data_utils" / "load.py").write_text("ROWS = 10\n")
    (root / "assets").mkdir()
    # Not compressible: a tokenizer-like binary of 5 MB.
    chunks = (hashlib.sha256(str(i).encode()).digest() for i in range(5 * 2**20 // 32))
    (root / "assets" / "tokenizer.bin").write_bytes(b"".join(chunks))
    (root / "train.py").write_text(SHOW)
    (root / "requirements.txt").write_text("gkemltiny==1.0\n")
    (root / "outputs").mkdir()
    (root / "outputs" / "big.ckpt").write_bytes(b"0" * 1000)
    (root / ".gkemlignore").write_text("outputs/\n")
    return root


@pytest.fixture
def wheels(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "wheels"
    folder.mkdir()
    tiny_wheel(folder)
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(folder), "PIP_NO_CACHE_DIR": "1"}


def job_of(project: Path, wheels: dict[str, str], **fields) -> TrainingJob:
    spec = {"requirements": "requirements.txt", "code_bucket": "gs://team-code/ml", **fields}
    return TrainingJob(
        name="proj", image="img", command=["python", "train.py"], workdir=str(project), env=wheels,
        **spec,
    )  # fmt: skip


def run_pod(job: TrainingJob, archive: Path, tmp: Path, uid: str) -> subprocess.CompletedProcess:
    """Run the compiled pod's containers as the kubelet would: its bootstrap init container,
    then the trainer once that exited 0, with their volumes standing as folders here (the
    bucket's archive folder, the checkpoint folder, the workspace emptyDir as their working
    directory). The outcome of the last that ran, with the stderr of both."""
    main = job.compile().main
    pod = main["spec"]["template"]["spec"]
    workspace = tmp / f"workspace-{uid}"  # each pod's own emptyDir
    workspace.mkdir()
    stderr = ""
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        assert container["workingDir"] == "/workspace"
        env = container_env(container, job_pod_metadata(main, uid))
        sha256 = env["GKEML_WORKDIR_SHA256"]
        assert env["GKEML_WORKDIR_ARCHIVE"] == f"/gkeml/workdir/{sha256}.tar.gz"
        env["GKEML_WORKDIR_ARCHIVE"] = str(archive)
        env["GKEML_WORKSPACE"] = str(workspace)
        env[c.CHECKPOINT_DIR] = str(tmp / "checkpoints")
        env["PATH"] = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # the image's python3
        done = subprocess.run(
            container_argv(container, env), env=env, cwd=workspace, capture_output=True,
            text=True, check=False,
        )  # fmt: skip
        stderr += done.stderr
        if done.returncode != 0:
            break
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, stderr)


def test_an_unchanged_tree_uploads_nothing_and_pods_unpack_the_same_hash(
    project, wheels, tmp_path, monkeypatch
):
    with cloud_storage("team-code") as storage:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", storage.url)
        shipped = ship_workdir(job_of(project, wheels))
        assert storage.uploads == 1
        # A namespace left out still follows the client's, as before the upload.
        assert "namespace" not in shipped.model_fields_set
        assert ship_workdir(job_of(project, wheels)).workdir == shipped.workdir
        assert storage.uploads == 1  # the second submit asked by name and sent nothing
        from google.cloud import storage as gcs

        name = shipped.workdir.removeprefix("gs://team-code/")
        data = gcs.Client().bucket("team-code").blob(name).download_as_bytes()
    digest = hashlib.sha256(data).hexdigest()
    assert shipped.workdir == f"gs://team-code/ml/gkeml-code/{digest}.tar.gz"
    assert 5 * 2**20 < len(data) < 6 * 2**20
    archive = tmp_path / "bucket" / f"{digest}.tar.gz"
    archive.parent.mkdir()
    archive.write_bytes(data)
    # The job as the run record keeps it compiles to the same pods: the hash is in its name.
    assert shipped.compile().to_yaml() == job_of(project, wheels).compile().to_yaml()
    first = run_pod(shipped, archive, tmp_path, "pod-1")
    assert first.returncode == 0, first.stderr
    shown = json.loads(first.stdout)
    assert shown["cwd"] == str(tmp_path / "workspace-pod-1")
    assert shown["files"] == [
        ".gkemlignore", "assets/tokenizer.bin", "data_utils/__init__.py", "data_utils/load.py",
        "models/__init__.py", "models/net.py", "requirements.txt", "train.py",
    ]  # fmt: skip
    assert (shown["tiny"], shown["blob"]) == (42, 5 * 2**20)
    assert first.stderr.count("gkeml: installing requirements") == 1
    # A preempted pod's replacement (a new uid) finds the environment in the checkpoint folder.
    second = run_pod(shipped, archive, tmp_path, "pod-2")
    assert second.returncode == 0, second.stderr
    assert "gkeml: installing requirements" not in second.stderr
    assert second.stderr.count("gkeml: requirements from the cache") == 1
    assert json.loads(second.stdout)["tiny"] == 42


def test_a_bucket_the_credentials_cannot_write_is_refused_before_anything_is_created(
    project, wheels, monkeypatch
):
    with cloud_storage("team-code") as storage:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", storage.url)
        storage.read_only_buckets.add("team-code")
        with pytest.raises(
            ConfigError, match=r"cannot write the workdir archive gs://team-code/ml"
        ):
            ship_workdir(job_of(project, wheels))
        with pytest.raises(ConfigError, match="the code bucket must exist"):
            ship_workdir(job_of(project, wheels, code_bucket="gs://no-such-bucket"))


def test_an_archive_whose_hash_differs_and_requirements_that_fail_end_the_start(
    project, wheels, tmp_path
):
    job = job_of(project, wheels, requirements=["gkemltiny==9.9"])
    sha = job.compile().main["spec"]["template"]["spec"]["containers"][0]["env"]
    digest = next(e["value"] for e in sha if e["name"] == "GKEML_WORKDIR_SHA256")
    from gkeml_sdk.training.workdir import pack_workdir

    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(pack_workdir(project).data)
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == digest
    failed = run_pod(job, archive, tmp_path, "pod-1")
    assert failed.returncode == 3
    assert failed.stdout == ""  # the trainer did not start
    assert "gkeml: pip could not install" in failed.stderr
    assert "No matching distribution found for gkemltiny==9.9" in failed.stderr
    archive.write_bytes(archive.read_bytes() + b"tampered")
    tampered = run_pod(job, archive, tmp_path, "pod-2")
    assert tampered.returncode == 3 and f"not the {digest} this job was compiled" in tampered.stderr


def test_the_local_backend_runs_the_same_archive_and_a_restart_does_not_reinstall(
    project, wheels, tmp_path
):
    (project / "train.py").write_text(
        SHOW + "import os, sys\nsys.exit(1 if os.environ['GKEML_RESTART_ATTEMPT'] == '0' else 0)\n"
    )
    backend = LocalBackend(run_dir=tmp_path / "runs", options=LocalOptions(grace_seconds=0.5))
    job = job_of(project, wheels, max_restarts=1).with_changes(image=None, code_bucket=None)
    run = submit(backend, job)
    assert run.wait(timeout=120).state is RunState.SUCCEEDED
    run_dir = Path(run.snapshot().path)
    packed = (run_dir / "workdir.tar.gz").read_bytes()
    from gkeml_sdk.training.workdir import pack_workdir

    assert packed == pack_workdir(project).data  # the bytes a pod would download
    shown = [json.loads(line[4:]) for line in run.logs() if line.startswith("[0] {")]
    assert len(shown) == 2 and {s["tiny"] for s in shown} == {42}
    assert shown[0]["files"] == shown[1]["files"] and "outputs/big.ckpt" not in shown[0]["files"]
    log = (run_dir / "logs" / "0.log").read_text()
    assert log.count("gkeml: installing requirements") == 1
    assert log.count("gkeml: requirements from the cache") == 1


def test_gkeml_submit_local_runs_the_spec_in_the_workdir(tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "train.py").write_text("import helper\nprint('ran', helper.X)\n")
    (folder / "helper.py").write_text("X = 7\n")
    spec = tmp_path / "job.yaml"
    spec.write_text("kind: TrainingJob\nname: proj\ncommand: [python, train.py]\n")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "gkeml_sdk.cli", "submit", str(spec), "--local", "--wait",
         "--workdir", str(folder)],
        env={"PYTHONPATH": str(root), "GKEML_RUN_DIR": str(tmp_path / "runs"),
             "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "proj: Succeeded" in done.stdout
    log = (tmp_path / "runs" / "default" / "proj" / "logs" / "0.log").read_text()
    assert "ran 7" in log


def test_a_workdir_that_cannot_travel_leaves_no_local_run(project, tmp_path):
    import socket

    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(project / "agent.sock"))
    backend = LocalBackend(run_dir=tmp_path / "runs")
    job = TrainingJob(name="sock", command=["python", "train.py"], workdir=str(project))
    with pytest.raises(SpecError, match=r"'agent\.sock' in the workdir is a socket"):
        backend.submit(job)
    assert not (tmp_path / "runs" / "default" / "sock").exists()
    listener.close()


def test_two_nodes_build_one_environment_and_a_failed_install_is_the_jobs_failure(wheels, tmp_path):
    backend = LocalBackend(run_dir=tmp_path / "runs", options=LocalOptions(grace_seconds=0.5))
    code = "import gkemltiny, os; print('rank', os.environ['NODE_RANK'], gkemltiny.VALUE)"
    shared = submit(backend,
        TrainingJob(name="two", command=["python", "-c", code], nodes=2, env=wheels,
                    requirements=["gkemltiny"])
    )  # fmt: skip
    assert shared.wait(timeout=120).state is RunState.SUCCEEDED
    assert sorted(line for line in shared.logs() if "rank" in line) == [
        "[0] rank 0 42",
        "[1] rank 1 42",
    ]
    logs = [(Path(shared.snapshot().path) / "logs" / f"{n}.log").read_text() for n in (0, 1)]
    assert sum(log.count("gkeml: installing requirements") for log in logs) == 1
    assert sum(log.count("gkeml: requirements from the cache") for log in logs) == 1
    # max_restarts=2 would start a failed process twice more: a failed install is not retried.
    broken = submit(backend,
        TrainingJob(name="broken", command=["python", "-c", "pass"], env=wheels,
                    requirements=["gkemltiny==9.9"], max_restarts=2)
    )  # fmt: skip
    status = broken.wait(timeout=120)
    assert (status.state, status.cause) == (RunState.FAILED, FailureCause.USER_CODE)
    assert status.reason == "PodFailurePolicy"
    assert "the bootstrap exited with code 3" in status.message
    assert "could not be prepared (pip's message is in its log)" in status.message
    assert broken.exit_codes == {"0": 3}
    run_dir = Path(broken.snapshot().path)
    assert len(list((run_dir / "checkpoints" / c.STARTS_DIR / "0").iterdir())) == 1
    log = (run_dir / "logs" / "0.log").read_text()
    assert "No matching distribution found for gkemltiny==9.9" in log
    assert log.count("gkeml: installing requirements") == 1
    assert any("No matching distribution found" in line for line in broken.logs())


def test_the_users_own_exit_3_after_an_install_is_retried_as_any_failure(wheels, tmp_path):
    backend = LocalBackend(run_dir=tmp_path / "runs", options=LocalOptions(grace_seconds=0.5))
    run = submit(backend,
        TrainingJob(name="three", command=["python", "-c", "import gkemltiny; exit(3)"],
                    env=wheels, requirements=["gkemltiny"], max_restarts=1)
    )  # fmt: skip
    status = run.wait(timeout=120)
    assert (status.state, status.reason) == (RunState.FAILED, "FailedIndexes")
    assert "exited with code 3; it failed 2 time(s), max_restarts=1" in status.message
    run_dir = Path(run.snapshot().path)
    assert len(list((run_dir / "checkpoints" / c.STARTS_DIR / "0").iterdir())) == 2
    log = (run_dir / "logs" / "0.log").read_text()
    assert log.count("gkeml: installing requirements") == 1
    assert log.count("gkeml: requirements from the cache") == 1
