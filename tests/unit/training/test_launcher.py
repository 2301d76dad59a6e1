"""The launcher every pod starts its command through, run as the kubelet would run it: the
compiled `python3 -c` command with the env the pod declares."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

from gkeml_sdk import TpuSlice, TrainingJob
from gkeml_sdk.core import environment as c
from gkeml_sdk.training import launcher
from tests.pod_env import container_argv, container_env, job_pod_metadata, jobset_pod_metadata

SHOW = "import json, os, sys; print(json.dumps([dict(os.environ), sys.argv[1:]]))"


def start(job: TrainingJob, checkpoints: Path, uid: str, job_index: int = 0, index: int = 0):
    main = job.compile().main
    if main["kind"] == "JobSet":
        metadata = jobset_pod_metadata(main, job_index, index, uid)
        pod = main["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    else:
        metadata, pod = job_pod_metadata(main, uid), main["spec"]["template"]
    container = pod["spec"]["containers"][0]
    env = container_env(container, metadata)
    env[c.CHECKPOINT_DIR] = str(checkpoints)  # the volume mounted there, on this machine
    done = subprocess.run(
        container_argv(container, env), env=env, capture_output=True, text=True, check=False
    )
    return done


def shown(done: subprocess.CompletedProcess[str]) -> tuple[dict[str, str], list[str]]:
    assert done.returncode == 0, done.stderr
    env, argv = json.loads(done.stdout)
    return env, argv


def multislice(**kw) -> TrainingJob:
    return TrainingJob(
        name="ms", image="img", command=[sys.executable, "-c", SHOW],
        accelerator=TpuSlice("v5e", "4x4", slices=2), checkpoint_dir="gs://bkt/ms", **kw,
    )  # fmt: skip


def test_the_source_has_no_reference_kubernetes_would_expand_and_uses_the_contract_names():
    source = inspect.getsource(launcher)
    assert "$" not in source
    for name in (c.START_ID, c.JOB_INDEX, c.POD_INDEX, c.PODS_PER_JOB, c.CHECKPOINT_DIR):
        assert f'"{name}"' in source
    for name in c.LAUNCHER_SETS:
        assert f'"{name}"' in source
    assert launcher.STARTS == c.STARTS_DIR


def test_a_pod_of_the_second_slice_gets_its_global_rank_in_env_and_command(tmp_path):
    job = multislice(args=["$(NODE_RANK)", "$$(NODE_RANK)", "$(NNODES)", "$(UNSET)", "5$"])
    env, argv = shown(start(job, tmp_path, "uid-a", job_index=1, index=2))
    assert env["NODE_RANK"] == env["JAX_PROCESS_ID"] == "6"  # slice 1 of 4 hosts, host 2
    assert env["TPU_WORKER_ID"] == "2" and env["MEGASCALE_SLICE_ID"] == "1"
    assert env["JAX_NUM_PROCESSES"] == env["NNODES"] == "8"
    assert env["GKEML_RESTART_ATTEMPT"] == "0"
    assert argv == ["6", "$(NODE_RANK)", "8", "$(UNSET)", "5$"]


def test_every_new_pod_of_a_rank_counts_one_more_start_and_the_same_pod_does_not(tmp_path):
    job = multislice()
    attempts = [
        shown(start(job, tmp_path, uid, job_index=1, index=0))[0]["GKEML_RESTART_ATTEMPT"]
        for uid in ("first", "second", "second", "third")
    ]
    assert attempts == ["0", "1", "1", "2"]
    other_rank = shown(start(job, tmp_path, "fourth", job_index=0, index=0))[0]
    assert other_rank["GKEML_RESTART_ATTEMPT"] == "0"
    assert sorted(p.name for p in (tmp_path / c.STARTS_DIR).iterdir()) == ["0", "4"]


def test_a_single_pod_job_counts_its_starts_too(tmp_path):
    job = TrainingJob(name="one", image="img", command=[sys.executable, "-c", SHOW],
                      checkpoint_dir="pvc://ckpt/one", max_restarts=2)  # fmt: skip
    assert job.compile().main["kind"] == "Job"
    runs = [shown(start(job, tmp_path, uid))[0] for uid in ("a", "b")]
    assert [(e["NODE_RANK"], e["GKEML_RESTART_ATTEMPT"]) for e in runs] == [("0", "0"), ("0", "1")]


def test_a_checkpoint_directory_it_cannot_write_fails_the_start_with_the_reason(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    done = start(multislice(), blocked, "uid")
    assert done.returncode == 1
    assert "cannot mark this start in GKEML_CHECKPOINT_DIR" in done.stderr


def test_a_missing_command_exits_as_a_container_whose_entrypoint_is_missing(tmp_path):
    job = multislice().with_changes(command=["no-such-command-gkeml"])
    done = start(job, tmp_path, "uid")
    assert done.returncode == 127 and "cannot start 'no-such-command-gkeml'" in done.stderr


def test_the_bootstrap_exit_code_is_the_one_the_failure_rules_name():
    # The launcher ships as stdlib-only source: it keeps its own copy of the code.
    from gkeml_sdk.core.environment import BOOTSTRAP_FAILED
    from gkeml_sdk.training.launcher import PREPARE_FAILED

    assert PREPARE_FAILED == BOOTSTRAP_FAILED == 3
