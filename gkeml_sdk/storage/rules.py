"""Rules for the volumes of one pod: distinct names and mount paths, clear of what gkeml
mounts itself, one setting per Cloud Storage FUSE sidecar, and read-write disks on one node."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gkeml_sdk.core.environment import CHECKPOINT_MOUNT, CODE_MOUNT
from gkeml_sdk.core.model import fail
from gkeml_sdk.storage import catalog as storage
from gkeml_sdk.storage.disks import HyperdiskML
from gkeml_sdk.storage.volume_base import VolumeBase
from gkeml_sdk.storage.volumes import GcsFuse

# Pod volumes and mount paths gkeml compiles itself.
RESERVED_NAMES = frozenset({"dshm", "checkpoints", "code", "model-cache", "model-repository"})
RESERVED_MOUNTS = (CHECKPOINT_MOUNT, CODE_MOUNT, "/dev/shm")


def check_volumes(
    volumes: Sequence[VolumeBase], *, pods: int, env: Iterable[str] = (), field: str = "volumes"
) -> None:
    """Raise `SpecError` for volumes that one pod template cannot hold together.

    Example:
        >>> from gkeml_sdk.storage.volumes import Pvc
        >>> check_volumes([Pvc("a", mount="/data"), Pvc("b", mount="/data")], pods=1)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: volumes 'a' and 'b' both mount at '/data' ...
    """
    names: dict[str, VolumeBase] = {}
    mounts: dict[str, VolumeBase] = {}
    for volume in volumes:
        name, path = volume.volume_name, volume.mount_path.rstrip("/") or "/"
        if name in RESERVED_NAMES or name in storage.GCSFUSE_RESERVED_VOLUMES or name in names:
            raise fail(
                f"volume name {name!r} is taken",
                rule="each pod volume has its own name; gkeml uses "
                + ", ".join(sorted(RESERVED_NAMES)),
                fix=f"name='{name}-2' on one of them",
                field=field,
            )
        if path in mounts:
            raise fail(
                f"volumes {mounts[path].volume_name!r} and {name!r} both mount at {path!r}",
                rule="a container mounts one volume per path",
                fix=f"mount='{path}-2' on one of them",
                field=field,
            )
        if path == "/" or any(path == r or path.startswith(r + "/") for r in RESERVED_MOUNTS):
            raise fail(
                f"volume {name!r} mounts at {path!r}",
                rule="gkeml mounts checkpoints, shipped code and shared memory at "
                + ", ".join(RESERVED_MOUNTS),
                fix=f"mount='/data/{name}'",
                field=field,
            )
        names[name], mounts[path] = volume, volume
        _check_one(volume, pods, field)
    _check_env(volumes, env, field)
    _check_sidecar(volumes, field)


def _check_one(volume: VolumeBase, pods: int, field: str) -> None:
    if isinstance(volume, HyperdiskML) and not volume.read_only_many and pods > 1:
        raise fail(
            f"HyperdiskML {volume.volume_name!r} is read-write on {pods} pods",
            rule="a read-write Hyperdisk ML disk attaches to one node only",
            fix="read_only_many=True (every pod reads), or one pod fills it first",
            field=field,
        )


def _check_env(volumes: Sequence[VolumeBase], env: Iterable[str], field: str) -> None:
    taken = {v.env_name: v for v in volumes}
    for key in env:
        if key in taken:
            raise fail(
                f"env {key!r} would hide the mount path of volume {taken[key].volume_name!r}",
                rule="gkeml sets GKEML_VOLUME_<NAME> to each volume's mount path",
                fix="rename the variable, or give the volume another name=",
                field=field,
            )


def _check_sidecar(volumes: Sequence[VolumeBase], field: str) -> None:
    seen: dict[str, str] = {}
    for volume in volumes:
        if not isinstance(volume, GcsFuse):
            continue
        for key, value in volume.sidecar.items():
            if seen.setdefault(key, value) != value:
                raise fail(
                    f"GCS FUSE sidecar {key}: {seen[key]!r} and {value!r}",
                    rule="one sidecar serves every Cloud Storage FUSE volume of a pod, so its "
                    "resources are set once per pod",
                    fix=f"the same sidecar={{{key!r}: ...}} on every GcsFuse volume",
                    field=field,
                )
