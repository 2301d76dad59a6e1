"""Hardware rules of a `ServeModel`: the GPU generation can run it, tensor/pipeline
parallelism suit the engine, node and model, and the context is sensible. A model that fits
no shape is refused by `serving.misfit`, whose error lists shapes that would."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware import gpus
from gkeml_sdk.serving.sizing import (
    choose,
    valid_tensor_parallel,
)

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel


def check_accelerator(svc: ServeModel) -> None:
    """GPU generation, sharing and MIG limits for a model server.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.errors import SpecError
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("t4"))
        ... except SpecError as exc:
        ...     print(exc.field)
        accelerator
    """
    acc = svc.accelerator
    if acc.machine_type is not None or acc.count > 1:  # an explicit machine shape
        acc.check_provisioning(spot=bool(svc.spot))
    have, need = acc.gpu.compute_capability, svc.min_compute_capability
    if have < need:
        newer = [g.key for g in gpus.GPUS if g.compute_capability >= need and g.arch == "amd64"]
        what = svc.weight_quantization or svc.dtype
        fix = "dtype='float16'" if svc.dtype == "bfloat16" and have >= 7.0 else ""
        raise fail(
            f"{acc.gpu.display} (compute capability {have:.1f}) cannot serve {what} with "
            f"{svc.engine_row.display}",
            rule=f"that needs compute capability {need:.1f} or newer",
            fix=" or ".join(filter(None, [fix, f"a GPU from {', '.join(newer)}"])),
            field="accelerator",
        )
    if acc.sharing is not None:
        raise fail(
            f"{acc} shares each GPU ({acc.sharing})",
            rule="model servers pre-allocate gpu_memory_utilization of the GPU; two servers "
            "on a time-shared or MPS GPU both claim it and fail",
            fix=f"a whole GPU (Accelerator({acc.model!r})) or a MIG slice",
            field="accelerator",
        )
    if acc.mig is not None and (
        svc.tensor_parallel not in ("auto", 1) or svc.pipeline_parallel not in ("auto", 1)
    ):
        raise fail(
            f"tensor/pipeline parallelism on MIG slice {acc.mig}",
            rule="a CUDA process sees a single MIG instance",
            fix="tensor_parallel=1, or whole GPUs",
            field="tensor_parallel",
        )


def check_parallelism(svc: ServeModel) -> None:
    """TP/PP values against the engine, the node and the model's heads.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.errors import SpecError
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), tensor_parallel=8)
        ... except SpecError as exc:
        ...     print(exc.field)
        tensor_parallel
    """
    eng, model, per_node = svc.engine_row, svc.resolved, svc.gpus_per_node
    tp, pp = svc.tensor_parallel, svc.pipeline_parallel
    valid = valid_tensor_parallel(model.shape, per_node)
    if isinstance(pp, int) and (pp < 1 or pp > model.shape.layers):
        raise fail(
            f"pipeline_parallel={pp}",
            rule=f"stages split the {model.shape.layers} layers",
            fix="pipeline_parallel='auto'",
            field="pipeline_parallel",
        )
    if isinstance(pp, int) and pp > 1 and not eng.pipeline_parallel:
        raise fail(
            f"pipeline_parallel={pp} with {eng.display}",
            rule=f"{eng.display} has no pipeline parallelism; it shards with tensor "
            "parallelism inside one node",
            fix=f"pipeline_parallel=1 with tensor_parallel up to {per_node}, or engine='vllm'",
            field="pipeline_parallel",
        )
    if isinstance(tp, int) and (tp < 1 or tp > per_node):
        raise fail(
            f"tensor_parallel={tp} on nodes of {per_node} GPU(s)",
            rule="tensor parallelism exchanges activations at every layer over NVLink, so it "
            "stays inside one node; span nodes with pipeline parallelism",
            fix=f"tensor_parallel={min(max(tp, 1), per_node)} (pipeline_parallel='auto' adds "
            "nodes)",
            field="tensor_parallel",
        )
    if isinstance(tp, int) and model.shape.attention_heads % tp:
        raise fail(
            f"tensor_parallel={tp} does not divide the {model.shape.attention_heads} attention "
            f"heads of {model.display}",
            rule="tensor parallelism gives each GPU an equal share of the heads",
            fix=f"tensor_parallel= one of {valid}",
            field="tensor_parallel",
        )
    if eng.parallelism_at_build and "auto" in (tp, pp):
        picked = choose(svc.sizing_input(tensor_parallel=None, pipeline_parallel=None))
        shape = (
            f"tensor_parallel={picked.tensor_parallel}, pipeline_parallel="
            f"{picked.pipeline_parallel} (what fits {model.display} on "
            f"{svc.accelerator.gpu.display})"
            if picked
            else "the tp_size/pp_size the engine was built with"
        )
        raise fail(
            f"{eng.display} needs tensor_parallel and pipeline_parallel set",
            rule="TensorRT-LLM fixes tp_size and pp_size when the engine is built; the pod "
            "launches that world size",
            fix=f"{shape}, and build the engine with the same",
            field="tensor_parallel",
        )


def check_context(svc: ServeModel) -> None:
    """`max_model_len` within the model's context; a positive concurrency target.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.errors import SpecError
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), max_model_len=65536)
        ... except SpecError as exc:
        ...     print(exc.field)
        max_model_len
    """
    limit = svc.resolved.max_context
    length = svc.context_length
    if length < 1 or (limit is not None and length > limit):
        raise fail(
            f"max_model_len={length} for {svc.resolved.display}",
            rule=f"the model's context is {limit} tokens" if limit else "a positive length",
            fix=f"max_model_len={min(limit or 8192, 8192)}",
            field="max_model_len",
        )
    if svc.concurrency is not None and svc.concurrency < 1:
        raise fail(f"concurrency={svc.concurrency}", fix="concurrency=8", field="concurrency")
