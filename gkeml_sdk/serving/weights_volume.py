"""The weights volume of a model server: its pod volume, mount and annotations, and the path
the engine loads the model from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.storage.manifests import PodVolumes, pod_volumes

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel


def weights_pod(svc: ServeModel) -> PodVolumes:
    """What `svc.weights` adds to each server pod (nothing without it); mounted read-only,
    as every replica reads the same files.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk import Accelerator
        >>> from gkeml_sdk.storage.disks import HyperdiskML
        >>> svc = ServeModel(name="a", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), weights=HyperdiskML(pvc="qwen", mount="/w"))
        >>> weights_pod(svc).mounts
        [{'name': 'qwen', 'mountPath': '/w', 'readOnly': True}]
    """
    if svc.weights is None:
        return PodVolumes()
    return pod_volumes([svc.weights.model_copy(update={"read_only": True})])


def model_location(svc: ServeModel) -> str:
    """What the engine's model flag names: the mount path of the weights, else the Hub id.

    Example:
        >>> from gkeml_sdk import ServeModel
        >>> from gkeml_sdk import Accelerator
        >>> from gkeml_sdk.storage.volumes import GcsFuse
        >>> model_location(ServeModel(name="a", model="Qwen/Qwen2.5-7B-Instruct",
        ...     accelerator=Accelerator("l4"), weights=GcsFuse("models", path="qwen-7b")))
        '/gkeml/volumes/models'
    """
    return svc.weights.mount_path if svc.weights is not None else svc.model
