"""Volumes compile into Jobs, JobSets, Deployments and LeaderWorkerSets that the API server
and its admission webhooks accept, with the mounts on every container that reads them."""

from __future__ import annotations

from typing import Any

import pytest

from gkeml_sdk import (
    Accelerator,
    GcsCache,
    GcsFuse,
    HyperdiskML,
    Parallelstore,
    Pvc,
    ServeModel,
    TrainingJob,
)
from gkeml_sdk.core.manifests import Manifests
from tests.schemas import validate_object

DATA = GcsFuse(
    "data-bkt",
    path="imagenet/train",
    mount="/data",
    read_only=True,
    cache=GcsCache(size="100Gi"),
    parallel_download=True,
    sidecar={"cpu-limit": "4", "ephemeral-storage-limit": "120Gi"},
)
VOLUMES = [
    DATA,
    Pvc("shared", mount="/shared"),
    HyperdiskML(bucket="weights", path="llama", size="300Gi"),
    Parallelstore("scratch", location="us-central1-a", project="p", access_points=["10.0.0.2"]),
]


def templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = obj["spec"]
    if obj["kind"] == "Job":
        return [spec["template"]]
    if obj["kind"] == "JobSet":
        return [r["template"]["spec"]["template"] for r in spec["replicatedJobs"]]
    if obj["kind"] == "LeaderWorkerSet":
        group = spec["leaderWorkerTemplate"]
        return [group["leaderTemplate"], group["workerTemplate"]]
    return [spec["template"]]


def check_pods(manifests: Manifests, volumes: list[Any]) -> None:
    for obj in manifests.objects:
        validate_object(obj)
    names = {v.volume_name for v in volumes}
    for template in templates(manifests.main):
        pod_volumes = {v["name"]: v for v in template["spec"]["volumes"]}
        assert names <= set(pod_volumes)
        for container in template["spec"]["containers"]:
            mounted = {m["name"]: m for m in container["volumeMounts"]}
            for volume in volumes:
                mount = mounted[volume.volume_name]
                assert mount["mountPath"] == volume.mount_path
                assert mount.get("readOnly", False) == volume.mounted_read_only
        if any(isinstance(v, GcsFuse) for v in volumes):
            assert template["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"


@pytest.mark.parametrize("nodes", [1, 2])
def test_training_job_and_jobset(nodes: int) -> None:
    job = TrainingJob(
        name="ft",
        image="img",
        command=["python", "t.py"],
        nodes=nodes,
        accelerator=Accelerator("h100", count=8),
        volumes=VOLUMES,
        service_account="trainer",
        namespace="ml",
    )
    manifests = job.compile()
    assert manifests.main["kind"] == ("JobSet" if nodes > 1 else "Job")
    check_pods(manifests, VOLUMES)
    kinds = [o["kind"] for o in manifests.objects]
    assert kinds == [
        "StorageClass",
        "PersistentVolume",
        "GCPDataSource",
        "PersistentVolumeClaim",
        "PersistentVolumeClaim",
        manifests.main["kind"],
    ]
    (pod,) = templates(manifests.main)
    assert pod["spec"]["serviceAccountName"] == "trainer"
    annotations = pod["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if k.startswith("gke-gcsfuse/")} == {
        "gke-gcsfuse/volumes": "true",
        "gke-gcsfuse/cpu-limit": "4",
        "gke-gcsfuse/ephemeral-storage-limit": "120Gi",
    }
    csi = next(v for v in pod["spec"]["volumes"] if v["name"] == "data-bkt")["csi"]
    assert csi == {
        "driver": "gcsfuse.csi.storage.gke.io",
        "readOnly": True,
        "volumeAttributes": {
            "bucketName": "data-bkt",
            "mountOptions": "implicit-dirs,only-dir=imagenet/train,"
            "file-cache:enable-parallel-downloads:true",
            "fileCacheCapacity": "100Gi",
            "fileCacheForRangeRead": "true",
            "metadataCacheTTLSeconds": "-1",
            "metadataStatCacheCapacity": "-1",
            "metadataTypeCacheCapacity": "-1",
        },
    }
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["GKEML_VOLUME_DATA_BKT"] == "/data"
    assert env["GKEML_VOLUME_WEIGHTS_LLAMA"] == "/gkeml/volumes/weights-llama"
    source = next(o for o in manifests.objects if o["kind"] == "GCPDataSource")
    assert source["spec"] == {
        "cloudStorage": {"serviceAccountName": "trainer", "uri": "gs://weights/llama/"}
    }
    claim = next(
        o
        for o in manifests.objects
        if o["metadata"]["name"] == "weights-llama" and o["kind"] == "PersistentVolumeClaim"
    )
    assert claim["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert claim["spec"]["dataSourceRef"]["name"] == "weights-llama"
    notes = " ".join(manifests.notes)
    assert "roles/storage.objectViewer on gs://data-bkt" in notes
    assert "subject/ns/ml/sa/trainer" in notes
    assert "gcs-to-hdml-compute-class" in notes
    # Kueue's view of the pods carries the same volumes.
    workload_pod = manifests.workload["spec"]["podSets"][0]["template"]
    assert workload_pod["spec"]["volumes"] == pod["spec"]["volumes"]


def test_gcs_checkpoint_dir_mounts_its_folder_through_gcs_fuse() -> None:
    job = TrainingJob(name="ft", image="img", command=["x"], checkpoint_dir="gs://ckpt-bkt/runs/ft")
    manifests = job.compile()
    for obj in manifests.objects:
        validate_object(obj)
    pod = manifests.main["spec"]["template"]
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "checkpoints")
    attributes = volume["csi"]["volumeAttributes"]
    assert attributes["bucketName"] == "ckpt-bkt"
    assert "only-dir=runs/ft" in attributes["mountOptions"].split(",")
    assert "file-cache:enable-parallel-downloads:true" in attributes["mountOptions"]
    assert attributes["metadataCacheTTLSeconds"] == "60"  # sees other pods' new checkpoints
    assert "readOnly" not in volume["csi"]
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["GKEML_CHECKPOINT_DIR"] == "/gkeml/checkpoints"
    annotations = pod["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if k.startswith("gke-gcsfuse/")} == {
        "gke-gcsfuse/volumes": "true"
    }
    assert "roles/storage.objectUser on gs://ckpt-bkt" in " ".join(manifests.notes)


@pytest.mark.parametrize(
    "weights",
    [
        HyperdiskML(bucket="llm-weights", path="llama-3.1-70b", size="300Gi"),
        GcsFuse("llm-weights", path="llama-3.1-70b", cache=GcsCache(), parallel_download=True),
    ],
)
@pytest.mark.parametrize(
    ("model", "kind"),
    [
        ("meta-llama/Llama-3.1-70B-Instruct", "Deployment"),
        ("meta-llama/Llama-3.1-405B-Instruct", "LeaderWorkerSet"),
    ],
)
def test_serving_loads_weights_from_the_volume(weights: Any, model: str, kind: str) -> None:
    svc = ServeModel(
        name="chat",
        model=model,
        accelerator=Accelerator("h100", count=8),
        weights=weights,
        service_account="server",
    )
    manifests = svc.compile()
    assert manifests.main["kind"] == kind
    mounted = weights.model_copy(update={"read_only": True})
    check_pods(manifests, [mounted])
    for template in templates(manifests.main):
        names = {v["name"] for v in template["spec"]["volumes"]}
        assert "model-cache" not in names  # nothing is downloaded
    leader = templates(manifests.main)[0]["spec"]["containers"][0]
    args = " ".join(leader["args"])
    assert f"--model {weights.mount_path} --served-model-name {model}" in args


def test_tgi_and_triton_point_at_the_mount() -> None:
    tgi = ServeModel(
        name="t",
        engine="tgi",
        model="Qwen/Qwen2.5-7B-Instruct",
        accelerator=Accelerator("l4"),
        weights=HyperdiskML(pvc="qwen", mount="/w"),
    )
    assert tgi.compile().main["spec"]["template"]["spec"]["containers"][0]["args"][1:3] == [
        "--model-id",
        "/w",
    ]
    triton = ServeModel(
        name="tr",
        engine="triton",
        model="mistral-7b",
        accelerator=Accelerator("l4"),
        tensor_parallel=1,
        pipeline_parallel=1,
        weights=GcsFuse("engines", path="mistral/tp1", mount="/repo"),
    )
    manifests = triton.compile()
    for obj in manifests.objects:
        validate_object(obj)
    args = manifests.main["spec"]["template"]["spec"]["containers"][0]["args"]
    assert any(a == "--model-repository=/repo" or a == "/repo" for a in args), args
