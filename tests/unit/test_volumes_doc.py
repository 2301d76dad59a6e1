"""docs/volumes.md shows what the code compiles: its YAML fragments and start-up figures."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from gkeml_sdk import Accelerator, GcsCache, GcsFuse, HyperdiskML, ServeModel, TrainingJob
from gkeml_sdk.storage.volume_objects import volume_objects

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "volumes.md").read_text()
BLOCKS = re.findall(r"```yaml\n(.*?)```", PAGE, flags=re.DOTALL)


def test_bucket_fragment_matches_the_compiled_pod() -> None:
    data = GcsFuse(
        "data-bkt",
        path="imagenet/train",
        mount="/data",
        read_only=True,
        cache=GcsCache(size="100Gi"),
        parallel_download=True,
        sidecar={"cpu-limit": "4"},
    )
    job = TrainingJob(
        name="ft",
        image="img",
        command=["python", "train.py"],
        service_account="trainer",
        namespace="ml",
        volumes=[data],
    )
    pod = job.compile().main["spec"]["template"]
    shown = yaml.safe_load(BLOCKS[0])
    assert shown["metadata"]["annotations"] == pod["metadata"]["annotations"]
    assert shown["spec"]["volumes"][0] in pod["spec"]["volumes"]
    container = pod["spec"]["containers"][0]
    assert shown["spec"]["containers"][0]["volumeMounts"][0] in container["volumeMounts"]
    assert shown["spec"]["containers"][0]["env"][0] in container["env"]


def test_hyperdisk_fragment_and_startup_figures() -> None:
    weights = HyperdiskML(bucket="llm-weights", path="llama-3.1-70b", size="300Gi")
    assert list(yaml.safe_load_all(BLOCKS[1])) == volume_objects([weights], "ml", "loader")
    base = dict(
        name="chat",
        model="meta-llama/Llama-3.1-70B-Instruct",
        accelerator=Accelerator("h100", count=8),
        hf_token_secret="hf",
    )
    fuse = GcsFuse("llm-weights", path="llama-3.1-70b", cache=GcsCache(), parallel_download=True)
    plans = [ServeModel(**base, weights=w).plan() for w in (None, fuse, weights)]  # type: ignore[arg-type]
    figures = [(p.expected_startup_seconds, p.startup_seconds) for p in plans]
    assert figures == [(865, 900), (418, 600), (357, 600)]
    for expected, budget in figures:
        assert f"{expected} s" in PAGE and f"{budget} s" in PAGE
