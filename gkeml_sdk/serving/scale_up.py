"""Sizing the user did not write: the sentence that says a spec was scaled past its
accelerator (more GPUs, parallelism, extra nodes), and the `max_gpus` cap that refuses it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel
    from gkeml_sdk.serving.sizing import Fit


def scale_up_sentence(svc: ServeModel) -> str | None:
    """One sentence when the chosen shape uses more GPUs or nodes than the spec wrote, else None.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> svc = ServeModel(name="chat", model="meta-llama/Llama-3.1-70B-Instruct",
        ...                  accelerator=Accelerator("l4"), hf_token_secret="hf")
        >>> print(scale_up_sentence(svc))  # doctest: +NORMALIZE_WHITESPACE
        sized up: Llama 3.1 70B needs 141 GB of weights in bfloat16 plus a KV cache
        for 2 x 8,192 tokens, more than 1 x L4 (24 GB) holds, so each replica uses 8 x L4
        (TP8 x PP1) on one node; max_gpus=N caps this
    """
    fit = svc.fit
    if fit is None or not _chosen(svc) or not _past_request(svc, fit):
        return None
    acc = svc.accelerator
    gpu = acc.gpu.key.upper() if acc.mig is None else f"{acc.gpu.key.upper()} {acc.mig}"
    where = f"over {fit.pods} nodes" if fit.multi_host else "on one node"
    return (
        f"sized up: {svc.resolved.display} needs {fit.weights_gb:.0f} GB of weights in "
        f"{svc.weight_quantization or svc.dtype} plus a KV cache for {fit.sequences} x "
        f"{fit.max_model_len:,} tokens, more than {acc.count} x {gpu} "
        f"({acc.count * fit.gpu_memory_gb:.0f} GB) holds, so each replica uses {fit.gpus} x "
        f"{gpu} (TP{fit.tensor_parallel} x PP{fit.pipeline_parallel}) {where}; "
        "max_gpus=N caps this"
    )


def check_max_gpus(svc: ServeModel) -> None:
    """Refuse a plan whose replica uses more than `svc.max_gpus` GPUs, with what would fit.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> from gkeml_sdk.errors import SpecError
        >>> try:
        ...     ServeModel(name="chat", model="meta-llama/Llama-3.1-70B-Instruct",
        ...                accelerator=Accelerator("l4"), hf_token_secret="hf", max_gpus=4)
        ... except SpecError as exc:
        ...     print(exc.field)
        max_gpus
    """
    fit = svc.fit
    if svc.max_gpus is None or fit is None:
        return
    if svc.max_gpus < 1:
        raise fail(f"max_gpus={svc.max_gpus}", rule="a positive GPU count", fix="max_gpus=8")
    if fit.gpus <= svc.max_gpus:
        return
    nodes = f" over {fit.pods} nodes" if fit.multi_host else ""
    raise fail(
        f"{svc.resolved.display} needs {fit.gpus} x {svc.accelerator.gpu.key.upper()} per "
        f"replica (TP{fit.tensor_parallel} x PP{fit.pipeline_parallel}{nodes}), above "
        f"max_gpus={svc.max_gpus}",
        rule=f"{fit.weights_gb:.0f} GB of weights plus the KV cache for {fit.sequences} "
        f"sequences of {fit.max_model_len:,} tokens must fit the replica's GPUs",
        fix=f"a GPU with more memory (e.g. accelerator=Accelerator('h100')), "
        f"quantization='fp8', a shorter max_model_len, or max_gpus={fit.gpus} to accept it",
        field="max_gpus",
    )


def _chosen(svc: ServeModel) -> bool:
    # Pinned tensor and pipeline parallelism is a shape the user wrote, not one we chose.
    return svc.tensor_parallel == "auto" or svc.pipeline_parallel == "auto"


def _past_request(svc: ServeModel, fit: Fit) -> bool:
    return fit.gpus > svc.accelerator.count or fit.multi_host
