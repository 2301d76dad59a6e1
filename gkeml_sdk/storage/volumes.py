"""Data volumes a pod mounts: a Cloud Storage bucket through GCS FUSE, a Parallelstore
instance, a Hyperdisk ML disk shared read-only (optionally pre-loaded from a bucket by GKE
Volume Populator), or an existing PersistentVolumeClaim."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from gkeml_sdk.core.model import SpecModel, fail
from gkeml_sdk.storage import catalog as storage
from gkeml_sdk.storage.disks import HyperdiskML, Parallelstore
from gkeml_sdk.storage.volume_base import VolumeBase


class GcsCache(SpecModel):
    """The Cloud Storage FUSE file and metadata caches of a mount.

    Example:
        >>> GcsCache(size="100Gi").metadata_ttl_seconds
        -1
    """

    size: str = Field(
        "-1",
        description='File cache capacity: "-1" (all of the cache volume) or a quantity ("100Gi").',
    )
    range_reads: bool = Field(
        True,
        description="Cache a whole file on its first ranged read (safetensors loads read ranges).",
    )
    metadata_ttl_seconds: int = Field(
        -1,
        description="How long stat and type entries live (-1: forever, for data that does not "
        "change while mounted).",
    )
    in_memory: bool = Field(
        False,
        description="Keep the cache on a RAM disk, counted against the pod's memory, instead of "
        "the sidecar's ephemeral storage.",
    )


class GcsFuse(VolumeBase):
    """A Cloud Storage bucket (or one folder of it) mounted through the GCS FUSE CSI driver.

    Example:
        >>> v = GcsFuse("my-data", path="imagenet", mount="/data", read_only=True,
        ...             cache=GcsCache(size="200Gi"), parallel_download=True)
        >>> v.volume_name, v.mount_path, v.source_uri
        ('my-data', '/data', 'gs://my-data/imagenet')
    """

    kind: Literal["gcsfuse"] = Field("gcsfuse", description="Which volume type this is: gcsfuse.")
    bucket: str = Field(description="The Cloud Storage bucket.")
    path: str = Field(
        "",
        description='Folder inside the bucket to mount (the mount\'s only-dir); "": the whole '
        "bucket.",
    )
    cache: GcsCache | None = Field(
        None, description="File and metadata caches: `GcsCache(...)`; None: no file cache."
    )
    parallel_download: bool = Field(
        False, description="Several workers fill the file cache, so large files load fast."
    )
    sidecar: dict[str, str] = Field(
        default_factory=dict,
        description="GCS FUSE sidecar resources as the pod annotations name them, e.g. "
        '{"cpu-limit": "2", "memory-request": "4Gi"}.',
    )

    def __init__(self, bucket: str | None = None, /, **data: Any) -> None:
        if bucket is not None:
            data["bucket"] = bucket
        super().__init__(**data)

    @model_validator(mode="after")
    def _check(self) -> Self:
        self._check_common()
        if not storage.BUCKET_NAME.match(self.bucket):
            bucket, _, path = self.bucket.removeprefix("gs://").partition("/")
            raise fail(
                f"bucket={self.bucket!r} is not a Cloud Storage bucket name",
                rule=f"{storage.BUCKET_RULE}; the folder inside the bucket goes in path=",
                fix=f"bucket={bucket!r}, path={path!r}" if path else "bucket='my-bucket'",
                field="bucket",
            )
        if "," in self.path or ".." in self.path.split("/"):
            raise fail(
                f"path={self.path!r}",
                rule="the folder is passed as a mount option (no ',') and stays in the bucket",
                fix="path='datasets/imagenet'",
                field="path",
            )
        if self.parallel_download and self.cache is None:
            raise fail(
                "parallel_download=True without a file cache",
                rule="parallel downloads write into the Cloud Storage FUSE file cache",
                fix="cache=GcsCache() (or cache=GcsCache(size='100Gi'))",
                field="parallel_download",
            )
        allowed = {f"{r}-{k}" for r in storage.SIDECAR_RESOURCES for k in ("limit", "request")}
        for key in self.sidecar:
            if key not in allowed:
                raise fail(
                    f"sidecar key {key!r}",
                    rule="the GCS FUSE sidecar takes cpu, memory and ephemeral-storage limits "
                    "and requests",
                    fix=f"one of {', '.join(sorted(allowed))}",
                    field="sidecar",
                )
        return self

    @property
    def source_uri(self) -> str:
        return f"gs://{self.bucket}/{self.path.strip('/')}".rstrip("/")

    @property
    def read_gb_per_second(self) -> float:
        """Planning throughput for loading weights through this mount."""
        if self.parallel_download:
            return storage.GCSFUSE_PARALLEL_GB_PER_SECOND
        return storage.GCSFUSE_GB_PER_SECOND

    def _source_name(self) -> str:
        return self.bucket


class Pvc(VolumeBase):
    """An existing PersistentVolumeClaim in the job's namespace (Filestore, Lustre, a PD...).

    Example:
        >>> Pvc("shared-data", mount="/data", read_only=True).source_uri
        'pvc://shared-data'
    """

    name: str | None = Field(
        None, description="The PersistentVolumeClaim's name (also the pod volume's)."
    )
    kind: Literal["pvc"] = Field("pvc", description="Which volume type this is: pvc.")

    def __init__(self, name: str | None = None, /, **data: Any) -> None:
        if name is not None:
            data["name"] = name
        super().__init__(**data)

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.name is None:
            raise fail("Pvc needs the claim's name", fix="Pvc('my-claim', mount='/data')")
        self._check_common()
        return self

    @property
    def claim(self) -> str:
        """The claim the pod mounts."""
        return self.volume_name

    @property
    def source_uri(self) -> str:
        return f"pvc://{self.claim}"

    def _source_name(self) -> str:
        return self.name or ""


Volume = Annotated[GcsFuse | Pvc | Parallelstore | HyperdiskML, Field(discriminator="kind")]
WeightsVolume = Annotated[GcsFuse | HyperdiskML, Field(discriminator="kind")]
