"""What every data volume shares: its pod volume name, mount path, the variable that carries
the mount path, and the source a local run maps to a folder."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from gkeml_sdk.core.model import DNS1123_LABEL, SpecModel, fail
from gkeml_sdk.core.rules import slug

VOLUME_ROOT = "/gkeml/volumes"
VOLUME_ENV_PREFIX = "GKEML_VOLUME_"


class VolumeBase(SpecModel):
    """Fields and derived names every volume type has."""

    name: str | None = Field(
        None, description="The pod volume's name; None derives it from the source."
    )
    mount: str | None = Field(
        None, description="Absolute path in the container; None: `/gkeml/volumes/<name>`."
    )
    read_only: bool = Field(False, description="Mount it read-only.")
    kind: str = Field(description="Which volume type this is, as YAML names it.")

    @model_serializer(mode="wrap")
    def _with_kind(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        # The kind tells the volume types apart in YAML, default or not.
        return {"kind": self.kind, **handler(self)}

    @property
    def volume_name(self) -> str:
        """The pod volume's name (and of the objects created for it)."""
        return self.name or slug(self._source_name(), empty="data")

    @property
    def mount_path(self) -> str:
        """Where the container sees the volume."""
        return self.mount or f"{VOLUME_ROOT}/{self.volume_name}"

    @property
    def env_name(self) -> str:
        """The variable that holds the mount path, on GKE and locally.

        Example:
            >>> from gkeml_sdk import Pvc
            >>> Pvc("train-data").env_name
            'GKEML_VOLUME_TRAIN_DATA'
        """
        return VOLUME_ENV_PREFIX + self.volume_name.upper().replace("-", "_")

    @property
    def mounted_read_only(self) -> bool:
        """Whether the container mounts it read-only."""
        return self.read_only

    @property
    def source_uri(self) -> str:
        """`gs://BUCKET/PATH` or `pvc://CLAIM`: what a local run maps to a folder."""
        raise NotImplementedError

    def _source_name(self) -> str:
        raise NotImplementedError

    def _check_common(self) -> None:
        if self.name is not None and not (len(self.name) <= 63 and DNS1123_LABEL.match(self.name)):
            raise fail(
                f"volume name={self.name!r}",
                rule="pod volume names are DNS-1123 labels (lower-case letters, digits, '-')",
                fix=f"name={slug(self.name, empty='data')!r}",
                field="name",
            )
        if self.mount is not None and (not self.mount.startswith("/") or ":" in self.mount):
            raise fail(
                f"mount={self.mount!r} is not an absolute path",
                rule="containers mount volumes at absolute paths without ':'",
                fix=f"mount='/data/{self.volume_name}'",
                field="mount",
            )
