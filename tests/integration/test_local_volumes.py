"""A local run sees its volumes as folders, through the variable that holds the mount path on
GKE: a mapped bucket folder, a default folder under the run store, and a missing mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from gkeml_sdk import (
    Client,
    ConfigError,
    GcsFuse,
    LocalOptions,
    LocalSettings,
    Pvc,
    RunState,
    TrainingJob,
)

READ = """
import os, pathlib
data = pathlib.Path(os.environ["GKEML_VOLUME_DATA"])
print("read", (data / "train.txt").read_text().strip())
scratch = pathlib.Path(os.environ["GKEML_VOLUME_SCRATCH"])
(scratch / "out.txt").write_text("written")
"""


def test_a_local_run_reads_a_file_from_a_mapped_bucket(tmp_path: Path) -> None:
    bucket = tmp_path / "bucket"
    (bucket / "imagenet").mkdir(parents=True)
    (bucket / "imagenet" / "train.txt").write_text("hello from the bucket\n")
    runs = tmp_path / "runs"
    client = Client(
        local=LocalSettings(
            run_dir=runs, volumes={"gs://data-bkt": bucket}, options=LocalOptions(grace_seconds=0.5)
        )
    )
    job = TrainingJob.from_code(
        READ,
        name="reader",
        volumes=[
            GcsFuse("data-bkt", path="imagenet", mount="/data", name="data", read_only=True),
            Pvc("scratch"),
        ],
    )
    run = client.submit(job)
    assert run.wait(timeout=60).state is RunState.SUCCEEDED, run.logs()
    assert any("read hello from the bucket" in line for line in run.logs())
    # The unmapped claim is a folder under the run store, kept after the run.
    assert (runs / ".volumes" / "pvc" / "scratch" / "out.txt").read_text() == "written"
    assert [r.name for r in client.runs()] == ["reader"]  # .volumes is no namespace


def test_command_arguments_expand_the_volume_variable(tmp_path: Path) -> None:
    bucket = tmp_path / "b"
    bucket.mkdir()
    (bucket / "x.txt").write_text("via argv")
    client = Client(local=LocalSettings(run_dir=tmp_path / "runs", volumes={"gs://bkt": bucket}))
    job = TrainingJob(
        name="argv",
        command=["python", "-c", "import sys; print(open(sys.argv[1]).read())"],
        args=["$(GKEML_VOLUME_BKT)/x.txt"],
        volumes=[GcsFuse("bkt", mount="/in")],
    )
    run = client.submit(job)
    assert run.wait(timeout=60).state is RunState.SUCCEEDED, run.logs()
    assert any("via argv" in line for line in run.logs())


def test_a_mapping_to_a_missing_folder_fails_the_submit(tmp_path: Path) -> None:
    client = Client(local=LocalSettings(run_dir=tmp_path, volumes={"pvc://c": tmp_path / "no"}))
    job = TrainingJob(name="x", command=["python", "-c", "0"], volumes=[Pvc("c")])
    with pytest.raises(ConfigError, match="not a folder"):
        client.submit(job)
