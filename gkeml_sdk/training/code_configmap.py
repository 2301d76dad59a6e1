"""The ConfigMap that carries a job's code files, and how pods mount it. It is the run's
record ConfigMap: on a cluster gkeml writes the record and the code in one object (one write
fewer per submission), and the pods mount only the code keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core import kinds
from gkeml_sdk.core.environment import CODE_MOUNT
from gkeml_sdk.core.labels import RUN_ID_LABEL, record_name, sdk_labels
from gkeml_sdk.core.objects import Obj
from gkeml_sdk.training.code import config_map_key

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields
VOLUME = "code"


def code_config_map_name(job: TrainingJobFields) -> str:
    """Name of the ConfigMap holding `job.files`.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> code_config_map_name(TrainingJob(name="ft", command=["x"]))
        'ft-gkeml-run'
    """
    return record_name(job.name)


def code_config_map(job: TrainingJobFields) -> Obj | None:
    """The ConfigMap with every code file (keys sorted, so the YAML is stable), or None.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> cm = code_config_map(TrainingJob.from_code("print(1)", name="a"))
        >>> cm["kind"], sorted(cm["data"])
        ('ConfigMap', ['file.main.py'])
    """
    if not job.files:
        return None
    return {
        "apiVersion": kinds.CORE,
        "kind": "ConfigMap",
        "metadata": {
            "name": code_config_map_name(job),
            "namespace": job.namespace,
            "labels": {RUN_ID_LABEL: job.name, **sdk_labels()},
        },
        "data": {config_map_key(p): job.files[p] for p in sorted(job.files)},
    }


def code_volume(job: TrainingJobFields) -> tuple[Obj, Obj]:
    """(volume, volumeMount) that place the files at `CODE_MOUNT`, read-only."""
    items = [{"key": config_map_key(p), "path": p} for p in sorted(job.files)]
    volume = {"name": VOLUME, "configMap": {"name": code_config_map_name(job), "items": items}}
    return volume, {"name": VOLUME, "mountPath": CODE_MOUNT, "readOnly": True}
