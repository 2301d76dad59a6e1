"""Data volumes on this machine: each volume of a job is a local folder, named by
`LocalSettings(volumes={"gs://bucket/path": "/folder", "pvc://claim": "/folder"})` or, unmapped,
a folder under the run store's `.volumes/`. A process finds it in `GKEML_VOLUME_<NAME>`, the
variable that holds the mount path on GKE: absolute mount paths such as `/data` are not
created here (they would need root and outlive the run)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gkeml_sdk.backends.local.system.confined import make_private_dir
from gkeml_sdk.errors import ConfigError
from gkeml_sdk.storage.volume_base import VolumeBase
from gkeml_sdk.training.model import TrainingJob

VOLUMES_DIR = ".volumes"  # not a store name, so never taken for a namespace


def volume_folders(
    job: TrainingJob, root: Path, mapping: Mapping[str, str | Path]
) -> dict[str, str]:
    """`GKEML_VOLUME_<NAME>` -> local folder for every volume of `job`; default folders are
    created, mapped ones must exist.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> from gkeml_sdk.storage.volumes import GcsFuse
        >>> job = TrainingJob(name="a", command=["x"], volumes=[GcsFuse("data", path="imgs")])
        >>> volume_folders(job, Path("/tmp/runs"), {"gs://data": "/srv/data"})  # doctest: +SKIP
        {'GKEML_VOLUME_DATA': '/srv/data/imgs'}
    """
    folders: dict[str, str] = {}
    for volume in job.volumes:
        mapped = local_folder(volume, mapping)
        if mapped is None:
            folder = default_folder(volume, root)
            make_private_dir(folder)
        else:
            folder = mapped
            if not folder.is_dir():
                raise ConfigError(
                    f"volume {volume.volume_name!r} ({volume.source_uri}) maps to {folder}, "
                    "which is not a folder (rule: a local run reads a volume from the folder "
                    "LocalSettings(volumes=...) names). Try: create it, or map "
                    f"{volume.source_uri!r} to an existing folder"
                )
        folders[volume.env_name] = str(folder)
    return folders


def local_folder(volume: VolumeBase, mapping: Mapping[str, str | Path]) -> Path | None:
    """The mapped folder of `volume`: the longest mapped source that is `volume`'s source or a
    folder above it, plus the rest of the path; None when nothing maps it.

    Example:
        >>> from gkeml_sdk.storage.volumes import GcsFuse
        >>> local_folder(GcsFuse("data", path="a/b"), {"gs://data/a": "/srv/a"})
        PosixPath('/srv/a/b')
    """
    source = volume.source_uri
    folders = {key.rstrip("/"): Path(value).expanduser() for key, value in mapping.items()}
    above = [key for key in folders if source == key or source.startswith(key + "/")]
    if not above:
        return None
    best = max(above, key=len)
    rest = source[len(best) :].strip("/")
    return folders[best] / rest if rest else folders[best]


def default_folder(volume: VolumeBase, root: Path) -> Path:
    """Where an unmapped volume lives: `<root>/.volumes/gs/BUCKET/PATH` or `.../pvc/CLAIM`.

    Example:
        >>> from gkeml_sdk.storage.volumes import Pvc
        >>> default_folder(Pvc("shared"), Path("/tmp/runs"))
        PosixPath('/tmp/runs/.volumes/pvc/shared')
    """
    scheme, _, rest = volume.source_uri.partition("://")
    return root / VOLUMES_DIR / scheme / rest
