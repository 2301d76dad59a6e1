"""Golden manifests of representative jobs: a diff of these files reviews a compile change.
Regenerate with GKEML_UPDATE_GOLDEN=1 after checking the diff."""

import os
from pathlib import Path

import pytest

from gkeml_sdk import Accelerator, TpuSlice, TrainingJob

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "training"
IMAGE = "us-docker.pkg.dev/p/r/trainer:1"

JOBS = {
    "gpu-gang-spot": TrainingJob(
        name="llama-ft", image=IMAGE, command=["python", "train.py"],
        accelerator=Accelerator("h100", count=8), nodes=2, spot=True, queue="team-a",
        max_restarts=3, checkpoint_dir="gs://ckpt-bucket/llama-ft",
    ),
    "gpu-single-mig": TrainingJob(
        name="notebook-ft", image=IMAGE, command=["python", "ft.py"],
        accelerator=Accelerator("a100-80gb", mig="3g.40gb"), queue="team-b", priority="low",
        max_runtime="4h",
    ),
    "tpu-multihost": TrainingJob(
        name="jax-pretrain", image=IMAGE, command=["python", "-m", "pretrain"],
        accelerator=TpuSlice("v5e", "4x4"), queue="tpu", checkpoint_dir="pvc://ckpt/jax",
    ),
    "tpu-multislice": TrainingJob(
        name="jax-ms", image=IMAGE, command=["python", "-m", "pretrain"],
        accelerator=TpuSlice("v5e", "4x4", slices=2), queue="tpu", spot=True,
        checkpoint_dir="gs://ckpt-bucket/jax-ms",
    ),
    "gpu-tcpxo": TrainingJob(
        name="mega-pretrain", image=IMAGE, command=["python", "train.py"],
        accelerator=Accelerator("h100-mega", count=8), nodes=4, queue="team-a",
        checkpoint_dir="gs://ckpt-bucket/mega",
    ),
    # An uploaded workdir and requirements: the bootstrap init container and its failure rules.
    "gpu-workdir-requirements": TrainingJob(
        name="proj-ft", image=IMAGE, command=["python", "train.py"],
        accelerator=Accelerator("h100", count=8), nodes=2, queue="team-a", max_restarts=2,
        checkpoint_dir="gs://ckpt-bucket/proj-ft", requirements=["sentencepiece==0.2.0"],
        workdir="gs://ckpt-bucket/gkeml-code/" + "3" * 64 + ".tar.gz",
    ),
    "cpu-only": TrainingJob(
        name="prep", image=IMAGE, command=["python", "prep.py"], cpu="4", memory="16Gi",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(JOBS))
def test_golden(name):
    path = GOLDEN / f"{name}.yaml"
    text = JOBS[name].compile().to_yaml()
    if os.environ.get("GKEML_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"{path} missing: run with GKEML_UPDATE_GOLDEN=1"
    assert text == path.read_text()
