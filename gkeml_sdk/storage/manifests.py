"""What data volumes add to a pod: the pod volumes (CSI ephemeral for buckets, claims for
disks), the mounts and `GKEML_VOLUME_<NAME>` variables of each container, and the Cloud
Storage FUSE sidecar annotations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.storage import catalog as storage

if TYPE_CHECKING:
    from gkeml_sdk.storage.volume_base import VolumeBase
    from gkeml_sdk.storage.volumes import GcsFuse


@dataclass(slots=True)
class PodVolumes:
    """The pod-level and container-level pieces of a set of volumes."""

    volumes: list[Obj] = field(default_factory=list)
    mounts: list[Obj] = field(default_factory=list)
    env: list[Obj] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


def pod_volumes(volumes: Sequence[VolumeBase], *, env: bool = True) -> PodVolumes:
    """Pod volumes, container mounts, mount-path variables and pod annotations for `volumes`.
    `env=False` leaves the variables out (a volume gkeml names otherwise, e.g. checkpoints).

    Example:
        >>> from gkeml_sdk.storage.volumes import GcsCache, GcsFuse
        >>> out = pod_volumes([GcsFuse("data-bkt", path="imagenet", mount="/data",
        ...                            read_only=True, cache=GcsCache(size="100Gi"))])
        >>> out.volumes[0]["csi"]["volumeAttributes"]["mountOptions"]
        'implicit-dirs,only-dir=imagenet'
        >>> out.mounts[0], out.env[0], out.annotations
        ({'name': 'data-bkt', 'mountPath': '/data', 'readOnly': True}, \
{'name': 'GKEML_VOLUME_DATA_BKT', 'value': '/data'}, {'gke-gcsfuse/volumes': 'true'})
    """
    out = PodVolumes()
    if not volumes:
        return out
    from gkeml_sdk.storage.volumes import GcsFuse  # loaded once a spec has volumes

    for volume in volumes:
        out.volumes.append(_volume(volume))
        mount: Obj = {"name": volume.volume_name, "mountPath": volume.mount_path}
        if volume.mounted_read_only:
            mount["readOnly"] = True
        out.mounts.append(mount)
        if env:
            out.env.append({"name": volume.env_name, "value": volume.mount_path})
    buckets = [v for v in volumes if isinstance(v, GcsFuse)]
    if buckets:
        out.annotations[storage.GCSFUSE_ANNOTATION] = "true"
    for bucket in buckets:
        for key, value in sorted(bucket.sidecar.items()):
            out.annotations[storage.GCSFUSE_SIDECAR_PREFIX + key] = value
    memory = [b for b in buckets if b.cache is not None and b.cache.in_memory]
    if memory:
        # One cache volume serves every bucket of the pod: a RAM disk instead of the sidecar's
        # ephemeral storage.
        out.volumes.append({"name": storage.GCSFUSE_CACHE_VOLUME, "emptyDir": {"medium": "Memory"}})
    return out


def merge(into: PodVolumes, other: PodVolumes) -> PodVolumes:
    """`into` with `other`'s pieces appended (annotations merged).

    Example:
        >>> merge(PodVolumes(volumes=[{"name": "a"}]), PodVolumes(volumes=[{"name": "b"}])).volumes
        [{'name': 'a'}, {'name': 'b'}]
    """
    names = {v["name"] for v in into.volumes}
    into.volumes.extend(v for v in other.volumes if v["name"] not in names)
    into.mounts.extend(other.mounts)
    into.env.extend(other.env)
    into.annotations.update(other.annotations)
    return into


def _volume(volume: VolumeBase) -> Obj:
    from gkeml_sdk.storage.volumes import GcsFuse  # loaded once a spec has volumes

    name = volume.volume_name
    if isinstance(volume, GcsFuse):
        csi: Obj = {"driver": storage.GCSFUSE_DRIVER}
        if volume.read_only:
            csi["readOnly"] = True
        csi["volumeAttributes"] = _gcsfuse_attributes(volume)
        return {"name": name, "csi": csi}
    claim: Obj = {"claimName": _claim(volume)}
    if volume.mounted_read_only:
        claim["readOnly"] = True
    return {"name": name, "persistentVolumeClaim": claim}


def _claim(volume: VolumeBase) -> str:
    from gkeml_sdk.storage.disks import HyperdiskML, Parallelstore  # loaded once a spec has volumes
    from gkeml_sdk.storage.volumes import Pvc

    if isinstance(volume, HyperdiskML | Parallelstore | Pvc):
        return volume.claim
    raise TypeError(f"no claim for {type(volume).__name__}")  # pragma: no cover


def _gcsfuse_attributes(volume: GcsFuse) -> dict[str, str]:
    options = ["implicit-dirs"]
    if volume.path.strip("/"):
        options.append(f"only-dir={volume.path.strip('/')}")
    if volume.parallel_download:
        options.append("file-cache:enable-parallel-downloads:true")
    attributes = {"bucketName": volume.bucket, "mountOptions": ",".join(options)}
    cache = volume.cache
    if cache is not None:
        attributes["fileCacheCapacity"] = cache.size
        attributes["fileCacheForRangeRead"] = "true" if cache.range_reads else "false"
        attributes["metadataCacheTTLSeconds"] = str(cache.metadata_ttl_seconds)
        # No size bound: the TTL alone decides how long entries live.
        attributes["metadataStatCacheCapacity"] = "-1"
        attributes["metadataTypeCacheCapacity"] = "-1"
    return attributes
