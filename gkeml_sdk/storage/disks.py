"""Block and parallel file system volumes: Hyperdisk ML (an existing claim, a snapshot, or a
bucket pre-loaded by GKE Volume Populator) and Parallelstore."""

from __future__ import annotations

import re
from typing import Any, Literal, Self

from pydantic import Field, model_validator

from gkeml_sdk.core.model import fail
from gkeml_sdk.storage import catalog as storage
from gkeml_sdk.storage.volume_base import VolumeBase

_GIB = re.compile(r"^([0-9]{1,7})(Gi|Ti)\Z")
_ACCESS_POINT = re.compile(r"^[0-9]{1,3}(\.[0-9]{1,3}){3}\Z")


class HyperdiskML(VolumeBase):
    """A Hyperdisk ML volume: written once, then read by many pods at high throughput.

    Give exactly one source: `pvc`, `snapshot` or `bucket` (GKE Volume Populator copies
    `gs://bucket/path/` into the new disk through a `GCPDataSource` before pods start).

    Example:
        >>> v = HyperdiskML(bucket="llm-weights", path="llama-3.1-70b", size="200Gi")
        >>> v.volume_name, v.mounted_read_only, round(v.read_gb_per_second, 2)
        ('llm-weights-llama-3-1-70b', True, 2.52)
    """

    kind: Literal["hyperdisk-ml"] = Field(
        "hyperdisk-ml", description="Which volume type this is: hyperdisk-ml."
    )
    pvc: str | None = Field(None, description="An existing, already filled claim to mount.")
    snapshot: str | None = Field(
        None, description="A VolumeSnapshot to restore into a new disk of `size`."
    )
    bucket: str | None = Field(
        None, description="A bucket GKE's Volume Populator copies into a new disk of `size`."
    )
    path: str = Field("", description='Folder of `bucket` to copy; "": the whole bucket.')
    size: str | None = Field(
        None,
        description='Size of a new disk, e.g. "200Gi"; needed to create one (with `snapshot` or '
        "`bucket`).",
    )
    throughput_mib: int = Field(
        storage.HYPERDISK_ML_DEFAULT_THROUGHPUT_MIB,
        description="Provisioned throughput of the disk, in MiB/s.",
    )
    read_only_many: bool = Field(
        True, description="Attach read-only to every node; False: read-write to one node."
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        self._check_common()
        sources = [s for s in (self.pvc, self.snapshot, self.bucket) if s is not None]
        if len(sources) != 1:
            raise fail(
                f"HyperdiskML with {len(sources)} sources",
                rule="a Hyperdisk ML volume comes from exactly one of: an existing claim, a "
                "snapshot, or a bucket that GKE Volume Populator copies in",
                fix="HyperdiskML(pvc='weights') or HyperdiskML(bucket='b', path='p', size='200Gi')",
                field="pvc",
            )
        if self.pvc is None:
            self._check_size()
        if self.snapshot is not None and not self.read_only_many:
            raise fail(
                "HyperdiskML(snapshot=..., read_only_many=False)",
                rule="a Hyperdisk ML disk cannot be created read-write from a snapshot",
                fix="read_only_many=True",
                field="read_only_many",
            )
        if not 1 <= self.throughput_mib <= 1_200_000:
            raise fail(
                f"throughput_mib={self.throughput_mib}",
                rule="Hyperdisk ML provisions up to 1,200,000 MiB/s per volume",
                fix=f"throughput_mib={storage.HYPERDISK_ML_DEFAULT_THROUGHPUT_MIB}",
                field="throughput_mib",
            )
        return self

    def _check_size(self) -> None:
        match = _GIB.match(self.size or "")
        gib = 0 if match is None else int(match[1]) * (1024 if match[2] == "Ti" else 1)
        if gib < storage.HYPERDISK_ML_MIN_GI:
            raise fail(
                f"HyperdiskML size={self.size!r}",
                rule="a new Hyperdisk ML disk needs a size in Gi or Ti, larger than 4Gi and "
                "larger than the data copied into it",
                fix="size='200Gi'",
                field="size",
            )

    @property
    def mounted_read_only(self) -> bool:
        return self.read_only or self.read_only_many

    @property
    def claim(self) -> str:
        """The claim the pod mounts: the given one, or the one compiled for this volume."""
        return self.pvc or self.volume_name

    @property
    def source_uri(self) -> str:
        if self.bucket is not None:
            return f"gs://{self.bucket}/{self.path.strip('/')}".rstrip("/")
        return f"pvc://{self.claim}"

    @property
    def read_gb_per_second(self) -> float:
        """Planning throughput for loading weights: the provisioned throughput."""
        return self.throughput_mib * storage.MIB / 1e9

    def _source_name(self) -> str:
        if self.bucket is not None:
            return f"{self.bucket}-{self.path}".rstrip("-")
        return self.pvc or self.snapshot or ""


class Parallelstore(VolumeBase):
    """A Parallelstore instance: an existing claim (`pvc`), or a static volume for an instance
    (`instance`, `location`, `project`, its `access_points` IPs and `capacity`).

    Example:
        >>> v = Parallelstore(instance="scratch", location="us-central1-a", project="p",
        ...                   access_points=["10.0.0.2", "10.0.0.3", "10.0.0.4"])
        >>> v.volume_handle
        'p/us-central1-a/scratch/default-pool/default-container'
    """

    kind: Literal["parallelstore"] = Field(
        "parallelstore", description="Which volume type this is: parallelstore."
    )
    pvc: str | None = Field(None, description="An existing claim of a Parallelstore volume.")
    instance: str | None = Field(
        None, description="The Parallelstore instance, for a static volume."
    )
    location: str | None = Field(None, description="The instance's zone.")
    project: str | None = Field(None, description="The instance's project.")
    access_points: list[str] = Field(
        default_factory=list, description="The instance's access point IPs."
    )
    capacity: str = Field(
        storage.PARALLELSTORE_CAPACITIES[0], description="The instance's capacity (a quantity)."
    )
    mount_locality: Literal["pod", "node"] = Field(
        "pod", description='Where the DFUSE client runs: "pod" (a sidecar) or "node".'
    )

    def __init__(self, instance: str | None = None, /, **data: Any) -> None:
        if instance is not None:
            data["instance"] = instance
        super().__init__(**data)

    @model_validator(mode="after")
    def _check(self) -> Self:
        self._check_common()
        static = (self.instance, self.location, self.project)
        if (self.pvc is None) == (None not in static):
            return self._check_static() if self.pvc is None else self
        raise fail(
            "Parallelstore needs either pvc= or instance=, location= and project=",
            rule="pods mount Parallelstore through a claim: an existing one, or a static "
            "PersistentVolume for the instance",
            fix="Parallelstore(pvc='scratch') or Parallelstore('scratch', "
            "location='us-central1-a', project='my-project', access_points=[...])",
            field="pvc",
        )

    def _check_static(self) -> Self:
        if not self.access_points or not all(_ACCESS_POINT.match(a) for a in self.access_points):
            raise fail(
                f"Parallelstore access_points={self.access_points!r}",
                rule="a static Parallelstore volume names the instance's access point IPs",
                fix="access_points=['10.0.0.2', '10.0.0.3', '10.0.0.4'] (gcloud parallelstore "
                "instances describe)",
                field="access_points",
            )
        if self.capacity not in storage.PARALLELSTORE_CAPACITIES:
            raise fail(
                f"Parallelstore capacity={self.capacity!r}",
                rule="a static Parallelstore PersistentVolume declares one of "
                + ", ".join(storage.PARALLELSTORE_CAPACITIES),
                fix=f"capacity={storage.PARALLELSTORE_CAPACITIES[0]!r}",
                field="capacity",
            )
        return self

    @property
    def volume_handle(self) -> str:
        """The CSI volume handle of a static volume."""
        return f"{self.project}/{self.location}/{self.instance}/default-pool/default-container"

    @property
    def claim(self) -> str:
        """The claim the pod mounts."""
        return self.pvc or self.volume_name

    @property
    def source_uri(self) -> str:
        return f"pvc://{self.claim}"

    def _source_name(self) -> str:
        return self.pvc or self.instance or ""
