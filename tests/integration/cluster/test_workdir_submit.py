"""`Client().submit` of a job with a workdir on the test API server, its uploads counted at a
loopback Cloud Storage: the JobSet's pods name the hash of the archive the bucket holds, the
run record keeps the archive's gs:// name (so the controller recompiles without the folder),
an unchanged tree uploads nothing, and a refused upload creates no object."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from gkeml_sdk import ConfigError, SpecError, TrainingJob
from tests.cloud_storage import cloud_storage
from tests.record_fields import record_field


def project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "train.py").write_text("import pkg\n")
    (root / "vocab.bin").write_bytes(bytes(range(256)) * 64)
    return root


def job(name: str, workdir: Path) -> TrainingJob:
    return TrainingJob(
        name=name, image="img", command=["python", "train.py"], workdir=str(workdir), nodes=2,
        queue="team-a", namespace="ml", code_bucket="gs://team-code/ml",
    )  # fmt: skip


def pod_env(server: Any, name: str) -> dict[str, str]:
    jobset = server.store.get("jobsets", "ml", name)
    spec = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    return {e["name"]: e.get("value", "") for e in spec["containers"][0]["env"]}


def test_pods_unpack_the_uploaded_hash_and_an_unchanged_tree_uploads_nothing(
    cluster, client, tmp_path, monkeypatch
):
    folder = project(tmp_path / "proj")
    with cloud_storage("team-code") as storage:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", storage.url)
        client.submit(job("first", folder))
        assert storage.uploads == 1
        client.submit(job("second", folder))
        assert storage.uploads == 1
        from google.cloud import storage as gcs

        blobs = list(gcs.Client().list_blobs("team-code", prefix="ml/gkeml-code/"))
        assert len(blobs) == 1
        digest = hashlib.sha256(blobs[0].download_as_bytes()).hexdigest()
    assert blobs[0].name == f"ml/gkeml-code/{digest}.tar.gz"
    for name in ("first", "second"):
        env = pod_env(cluster, name)
        assert env["GKEML_WORKDIR_SHA256"] == digest
        assert env["GKEML_WORKDIR_ARCHIVE"] == f"/gkeml/workdir/{digest}.tar.gz"
        record = cluster.store.get("configmaps", "ml", f"{name}-gkeml-run")
        spec = yaml.safe_load(record_field(record, "spec.yaml"))
        assert spec["workdir"] == f"gs://team-code/ml/gkeml-code/{digest}.tar.gz"
        assert not [k for k in record["data"] if k.startswith("file.")]


def test_a_refused_upload_creates_nothing_in_the_cluster(cluster, client, tmp_path, monkeypatch):
    folder = project(tmp_path / "proj")
    with cloud_storage("team-code") as storage:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", storage.url)
        storage.read_only_buckets.add("team-code")
        with pytest.raises(ConfigError, match=r"roles/storage\.objectCreator"):
            client.submit(job("refused", folder))
    assert cluster.store.get("configmaps", "ml", "refused-gkeml-run") is None
    assert cluster.store.list("jobsets", "ml") == []


def test_without_a_bucket_a_small_workdir_travels_in_the_run_record(cluster, client, tmp_path):
    folder = tmp_path / "small"
    folder.mkdir()
    (folder / "train.py").write_text("print('hi')\n")
    (folder / "conf.yaml").write_text("lr: 0.1\n")
    client.submit(job("small", folder).with_changes(code_bucket=None))
    record = cluster.store.get("configmaps", "ml", "small-gkeml-run")
    assert record["data"]["file.train.py"] == "print('hi')\n"
    assert record["data"]["file.conf.yaml"] == "lr: 0.1\n"
    (folder / "weights.bin").write_bytes(b"\xff\xfe" * 10)
    with pytest.raises(SpecError, match=r"without a bucket: 'weights\.bin' is not UTF-8"):
        client.submit(job("binary", folder).with_changes(code_bucket=None))
    assert cluster.store.get("configmaps", "ml", "binary-gkeml-run") is None
