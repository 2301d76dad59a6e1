"""Where a model server reads its weights, and how long that takes: the Hugging Face Hub, or
a mounted volume (Cloud Storage FUSE, Hyperdisk ML) that holds the model's files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail
from gkeml_sdk.storage import catalog as storage
from gkeml_sdk.storage.rules import check_volumes

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel


def check_weights(svc: ServeModel) -> None:
    """Raise `SpecError` for a weights volume the service cannot use."""
    weights = svc.weights
    if weights is None:
        return
    if svc.model_repository is not None:
        raise fail(
            "both weights= and model_repository=",
            rule="the server reads one model location",
            fix="keep weights=, which for Triton is the model repository",
            field="weights",
        )
    fit = svc.fit
    pods = svc.max_replicas * (fit.pods if fit is not None else 1)
    check_volumes([weights], pods=pods, env=svc.env, field="weights")


def load_gb_per_second(svc: ServeModel) -> float | None:
    """Planning throughput of the weight load, or None when nothing is fetched at start-up
    (a Triton repository of prebuilt engines).

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> from gkeml_sdk.storage.disks import HyperdiskML
        >>> svc = ServeModel(name="a", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"), weights=HyperdiskML(pvc="qwen"))
        >>> round(load_gb_per_second(svc), 2)
        2.52
    """
    if svc.weights is not None:
        return svc.weights.read_gb_per_second
    if svc.engine_row.downloads_weights:
        return storage.HUB_GB_PER_SECOND
    return None


def weights_source(svc: ServeModel) -> str:
    """Where the weights come from, for the plan.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> weights_source(ServeModel(name="a", model="Qwen/Qwen2.5-7B-Instruct",
        ...                           accelerator=Accelerator("l4")))
        'Hugging Face Hub download'
    """
    weights = svc.weights
    if weights is not None:
        kind = "Cloud Storage FUSE" if weights.kind == "gcsfuse" else "Hyperdisk ML"
        return f"{kind} {weights.source_uri} at {weights.mount_path}"
    if svc.engine_row.downloads_weights:
        return "Hugging Face Hub download"
    return f"model repository {svc.model_repository}"
