"""Where checkpoints live so that they survive pod restarts and preemption."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gkeml_sdk.core.environment import CHECKPOINT_MOUNT
from gkeml_sdk.core.model import DNS1123_SUBDOMAIN, fail
from gkeml_sdk.storage.catalog import BUCKET_NAME, BUCKET_RULE

if TYPE_CHECKING:
    from gkeml_sdk.storage.volume_base import VolumeBase
    from gkeml_sdk.storage.volumes import GcsFuse

# What a pod can keep checkpoints on so that they outlive it (docs/environment.md, "What
# survives what"); everything else (the default emptyDir, the container's own file system)
# goes with the pod.
DURABLE_STORAGE = (
    "a Cloud Storage bucket (GCS FUSE), a PersistentVolumeClaim, Parallelstore or Hyperdisk"
)


@dataclass(frozen=True, slots=True)
class CheckpointLocation:
    """A parsed `checkpoint_dir`.

    Example:
        >>> parse_checkpoint_dir("gs://my-bucket/runs/llama")
        CheckpointLocation(kind='gcs', source='my-bucket', path='runs/llama')
    """

    kind: Literal["gcs", "pvc", "path"]
    source: str  # bucket, claim name, or the absolute path
    path: str = ""


def parse_checkpoint_dir(value: str) -> CheckpointLocation:
    """`gs://BUCKET[/PATH]` (Cloud Storage FUSE), `pvc://CLAIM[/PATH]` or an absolute path
    that is already persistent in the image or node."""
    if value.startswith("gs://"):
        bucket, _, path = value[5:].partition("/")
        if not bucket:
            raise _bad(value)
        if not BUCKET_NAME.match(bucket):
            raise fail(
                f"checkpoint_dir={value!r}: {bucket!r} is not a Cloud Storage bucket name",
                rule=BUCKET_RULE,
                fix=f"checkpoint_dir='gs://my-bucket/{path or 'PATH'}'",
                field="checkpoint_dir",
            )
        return CheckpointLocation("gcs", bucket, path.strip("/"))
    if value.startswith("pvc://"):
        claim, _, path = value[6:].partition("/")
        if not DNS1123_SUBDOMAIN.match(claim):
            raise _bad(value)
        return CheckpointLocation("pvc", claim, path.strip("/"))
    if value.startswith("/"):
        return CheckpointLocation("path", value)
    raise _bad(value)


def durable_volume(
    checkpoint_dir: str | None, volumes: Sequence[VolumeBase]
) -> CheckpointLocation | VolumeBase | None:
    """Where checkpoints outlive the pod: a `gs://` or `pvc://` checkpoint_dir, or the
    writable volume whose mount holds a path checkpoint_dir; None for the default emptyDir and
    for a path on no writable volume (the container's file system).

    Example:
        >>> from gkeml_sdk.storage.volumes import Pvc
        >>> durable_volume("/data/ckpt", [Pvc("shared", mount="/data")]).source_uri
        'pvc://shared'
        >>> durable_volume(None, []) is None, durable_volume("/tmp/ckpt", []) is None
        (True, True)
    """
    if checkpoint_dir is None:
        return None
    location = parse_checkpoint_dir(checkpoint_dir)
    if location.kind != "path":
        return location
    for volume in volumes:
        mount = volume.mount_path.rstrip("/")
        inside = location.source == mount or location.source.startswith(mount + "/")
        if inside and not volume.mounted_read_only:
            return volume
    return None


def checkpoint_volume(location: CheckpointLocation) -> GcsFuse:
    """The Cloud Storage FUSE mount of a `gs://` checkpoint_dir: its folder at the checkpoint
    mount, read-write, with a file cache and parallel downloads so that a restore reads large
    shards fast, and the default metadata TTL, so that each pod sees checkpoints another pod
    has just written.

    Example:
        >>> v = checkpoint_volume(parse_checkpoint_dir("gs://ckpt/runs/llama"))
        >>> v.mount_path, v.path, v.parallel_download, v.cache.metadata_ttl_seconds
        ('/gkeml/checkpoints', 'runs/llama', True, 60)
    """
    from gkeml_sdk.storage.volumes import GcsCache, GcsFuse  # loaded when a job mounts one

    return GcsFuse(
        location.source,
        path=location.path,
        name="checkpoints",
        mount=CHECKPOINT_MOUNT,
        cache=GcsCache(metadata_ttl_seconds=60),
        parallel_download=True,
    )


def _bad(value: str) -> Exception:
    return fail(
        f"checkpoint_dir={value!r} is not a location pods can share across restarts",
        rule="checkpoints must outlive the pod: a Cloud Storage bucket, a PVC, or a mounted path",
        fix="checkpoint_dir='gs://BUCKET/PATH', 'pvc://CLAIM/PATH' or '/mnt/shared/ckpt'",
        field="checkpoint_dir",
    )
