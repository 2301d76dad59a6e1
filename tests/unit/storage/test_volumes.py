"""Volume specs: what each type accepts and refuses at construction, and lossless YAML."""

from __future__ import annotations

import pytest

from gkeml_sdk import (
    Accelerator,
    GcsCache,
    GcsFuse,
    HyperdiskML,
    Parallelstore,
    Pvc,
    ServeModel,
    SpecError,
    TrainingJob,
)

ALL = [
    GcsFuse(
        "data-bkt",
        path="imagenet",
        mount="/data",
        read_only=True,
        cache=GcsCache(size="100Gi", in_memory=True),
        parallel_download=True,
        sidecar={"cpu-limit": "4", "memory-limit": "8Gi"},
    ),
    Pvc("shared", mount="/shared", read_only=True),
    HyperdiskML(bucket="weights", path="llama", size="300Gi", throughput_mib=4800),
    HyperdiskML(snapshot="llama-snap", size="300Gi", name="snap"),
    HyperdiskML(pvc="filled"),
    Parallelstore(
        "scratch",
        location="us-central1-a",
        project="p",
        access_points=["10.0.0.2", "10.0.0.3"],
        capacity="16Ti",
    ),
    Parallelstore(pvc="ps-claim", name="ps2"),
]


def test_a_job_with_every_volume_type_round_trips_through_yaml() -> None:
    job = TrainingJob(name="a", image="i", command=["x"], volumes=ALL)
    text = job.to_yaml()
    assert [line for line in text.splitlines() if "kind:" in line] == [
        "- kind: gcsfuse",
        "- kind: pvc",
        "- kind: hyperdisk-ml",
        "- kind: hyperdisk-ml",
        "- kind: hyperdisk-ml",
        "- kind: parallelstore",
        "- kind: parallelstore",
    ]
    assert TrainingJob.from_yaml(text) == job
    assert job.with_changes(spot=True).volumes == job.volumes


def test_the_json_schema_of_volumes_names_every_volume_kind() -> None:
    schema = TrainingJob.model_json_schema()
    items = schema["properties"]["volumes"]["items"]
    assert set(items["discriminator"]["mapping"]) == {
        "gcsfuse",
        "hyperdisk-ml",
        "parallelstore",
        "pvc",
    }
    assert {"GcsFuse", "Pvc", "Parallelstore", "HyperdiskML"} <= set(schema["$defs"])


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: GcsFuse("gs://bkt/folder"), "bucket='bkt', path='folder'"),
        (lambda: GcsFuse("ab"), "not a Cloud Storage bucket name"),
        (lambda: GcsFuse("bkt", path="a,b"), "no ','"),
        (lambda: GcsFuse("bkt", parallel_download=True), "cache=GcsCache()"),
        (lambda: GcsFuse("bkt", sidecar={"cpu": "1"}), "cpu-limit"),
        (lambda: GcsFuse("bkt", mount="data"), "absolute path"),
        (lambda: GcsFuse("bkt", name="Data_1"), "name='data-1'"),
        (lambda: HyperdiskML(), "exactly one of"),
        (lambda: HyperdiskML(pvc="a", bucket="bkt"), "exactly one of"),
        (lambda: HyperdiskML(bucket="bkt"), "size='200Gi'"),
        (lambda: HyperdiskML(bucket="bkt", size="4Gi"), "larger than 4Gi"),
        (lambda: HyperdiskML(snapshot="s", size="9Gi", read_only_many=False), "from a snapshot"),
        (lambda: Parallelstore("i", location="z"), "pvc= or instance="),
        (lambda: Parallelstore("i", location="z", project="p"), "access_points"),
        (
            lambda: Parallelstore(
                "i", location="z", project="p", access_points=["10.0.0.1"], capacity="1Ti"
            ),
            "12Ti",
        ),
    ],
)
def test_bad_volumes_fail_with_the_fix(make: object, words: str) -> None:
    with pytest.raises(SpecError) as err:
        make()  # type: ignore[operator]
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"volumes": [Pvc("a", mount="/d"), Pvc("b", mount="/d")]}, "both mount at '/d'"),
        ({"volumes": [Pvc("a"), HyperdiskML(pvc="a")]}, "'a' is taken"),
        ({"volumes": [Pvc("code")]}, "'code' is taken"),
        ({"volumes": [Pvc("a", mount="/gkeml/checkpoints/x")]}, "checkpoints"),
        ({"volumes": [Pvc("a", mount="/dev/shm")]}, "checkpoints, shipped code"),
        ({"volumes": [Pvc("a")], "env": {"GKEML_VOLUME_A": "x"}}, "would hide"),
        (
            {
                "volumes": [
                    GcsFuse("bkt", sidecar={"cpu-limit": "1"}),
                    GcsFuse("bk2", sidecar={"cpu-limit": "2"}),
                ]
            },
            "one sidecar serves every",
        ),
        (
            {
                "volumes": [HyperdiskML(bucket="bkt", size="9Gi", read_only_many=False)],
                "nodes": 2,
            },
            "attaches to one node",
        ),
        ({"checkpoint_dir": "gs://x/ckpt"}, "not a Cloud Storage bucket name"),
    ],
)
def test_jobs_refuse_volumes_a_pod_cannot_hold(fields: dict[str, object], words: str) -> None:
    with pytest.raises(SpecError) as err:
        TrainingJob(name="a", image="i", command=["x"], **fields)  # type: ignore[arg-type]
    assert words in str(err.value)


def test_a_read_write_hyperdisk_on_one_pod_is_accepted() -> None:
    volume = HyperdiskML(bucket="bkt", size="9Gi", read_only_many=False)
    assert TrainingJob(name="a", command=["x"], volumes=[volume]).volumes == [volume]


def test_weights_volume_rules() -> None:
    base = dict(
        name="t",
        engine="triton",
        model="mistral-7b",
        accelerator=Accelerator("l4"),
        tensor_parallel=1,
        pipeline_parallel=1,
        hf_token_secret="hf",
    )
    triton = ServeModel(**base, weights=GcsFuse("engines", path="mistral"))  # type: ignore[arg-type]
    assert triton.weights is not None
    with pytest.raises(SpecError, match="both weights= and model_repository="):
        ServeModel(**base, weights=GcsFuse("engines"), model_repository="gs://engines/m")  # type: ignore[arg-type]
    rw = HyperdiskML(bucket="bkt", size="90Gi", read_only_many=False)
    with pytest.raises(SpecError, match="read-write on 2 pods"):
        ServeModel(
            name="q",
            model="Qwen/Qwen2.5-7B-Instruct",
            accelerator=Accelerator("l4"),
            replicas=2,
            weights=rw,
        )


def test_gated_model_from_a_volume_needs_no_hub_token() -> None:
    with pytest.raises(SpecError, match="gated"):
        ServeModel(
            name="c", model="meta-llama/Llama-3.1-8B-Instruct", accelerator=Accelerator("l4")
        )
    svc = ServeModel(
        name="c",
        model="meta-llama/Llama-3.1-8B-Instruct",
        accelerator=Accelerator("l4"),
        weights=HyperdiskML(pvc="llama-8b"),
    )
    assert svc.hf_token_secret is None


@pytest.mark.parametrize("uri", ["gs://b/ckpt", "gs://My_Bucket/ckpt"])
def test_a_bad_bucket_in_checkpoint_dir_names_checkpoint_dir(uri: str) -> None:
    from gkeml_sdk import TrainingJob

    with pytest.raises(SpecError) as caught:
        TrainingJob(name="ft", command=["x"], checkpoint_dir=uri, spot=True)
    text = str(caught.value)
    assert text.startswith(f"checkpoint_dir={uri!r}: ") and "bucket=" not in text
    assert "Try: checkpoint_dir='gs://my-bucket/ckpt'" in text
    assert caught.value.field == "checkpoint_dir"
