"""Whether a `ServeModel` fits its hardware: GPU generation, parallelism, context, a shape that
holds it (else the shapes that would), the `max_gpus` cap and the sentence when it was sized up.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail
from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware import gpu_row, gpus
from gkeml_sdk.pricing.catalog import PriceBook
from gkeml_sdk.serving import catalog
from gkeml_sdk.serving.sizing import (
    ACTIVATION_OVERHEAD_GB,
    Fit,
    SizingInput,
    choose,
    evaluate,
    shapes,
    valid_tensor_parallel,
)

if TYPE_CHECKING:
    from gkeml_sdk.serving.fields import ServeFields


def check_accelerator(svc: ServeFields) -> None:
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


def check_parallelism(svc: ServeFields) -> None:
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


def check_context(svc: ServeFields) -> None:
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


def scale_up_sentence(svc: ServeFields) -> str | None:
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


def check_max_gpus(svc: ServeFields) -> None:
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


def does_not_fit(svc: ServeFields) -> SpecError:
    """The error for a model that fits no allowed shape, with the numbers and options.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), max_model_len=32768, concurrency=16,
        ...                tensor_parallel=1)
        ... except SpecError as exc:
        ...     print(exc.field)
        accelerator
    """
    inp, eng, acc = svc.sizing_input(), svc.engine_row, svc.accelerator
    tried = shapes(inp)
    worst = tried[-1] if tried else evaluate(inp, inp.tensor_parallel or 1, 1, 1)
    fp8 = catalog.weight_format("fp8").bytes_per_param if eng.supports_quantization("fp8") else None
    options = alternatives(inp, acc.gpu.key, fp8_bytes=fp8, min_compute=svc.min_compute_capability)
    if not inp.multi_host and acc.mig is None:
        spread = choose(replace(inp, multi_host=True, pipeline=True))
        if spread is not None and spread.multi_host:
            options.append(
                f"engine='vllm' over {spread.pods} nodes (TP{spread.tensor_parallel} x "
                f"PP{spread.pipeline_parallel})"
            )
    name = acc.gpu.key.upper() if acc.mig is None else f"{acc.gpu.key.upper()} {acc.mig}"
    fmt = svc.weight_quantization or svc.dtype
    gpus = f"{worst.gpus} x {name}"
    if worst.weights_gb_per_gpu + worst.overhead_gb > worst.usable_gb:
        verb = "has" if worst.gpus == 1 else "have"
        what = (
            f"{svc.resolved.display} in {fmt} needs {worst.weights_gb:.0f} GB of weights; {gpus} "
            f"{verb} {worst.gpus * worst.gpu_memory_gb:.0f} GB ({worst.usable_gb:.1f} GB usable "
            f"per GPU at gpu_memory_utilization={svc.gpu_memory_utilization:g})"
        )
    else:
        what = (
            f"{svc.resolved.display} at max_model_len={worst.max_model_len}: {gpus} leave "
            f"{max(worst.kv_gb_per_gpu, 0):.1f} GB per GPU for the KV cache "
            f"({worst.kv_tokens:,} tokens = {worst.max_concurrency:.1f} sequences); "
            f"{worst.sequences} are needed"
        )
        shorter = _shorter_context(worst.kv_tokens // worst.sequences)
        if shorter:
            options.insert(0, f"max_model_len={shorter}")
        if svc.kv_cache_dtype == "auto" and "fp8" in dict(eng.kv_cache_dtypes):
            options.insert(0, "kv_cache_dtype='fp8'")
    return fail(
        what,
        rule=f"weights/(TP x PP) + {ACTIVATION_OVERHEAD_GB:g} GB activations + KV for "
        f"{worst.sequences} x max_model_len tokens must fit in "
        f"{svc.gpu_memory_utilization:g} x GPU memory (docs/serving.md: sizing)",
        fix="options: " + _or_join(options) if options else "a larger GPU or a smaller model",
        field="accelerator",
    )


def alternatives(
    inp: SizingInput,
    gpu_key: str,
    *,
    fp8_bytes: float | None,
    min_compute: float = 0.0,
    prices: PriceBook | None = None,
    limit: int = 3,
) -> list[str]:
    """Shapes that would work, cheapest per hour first: the same GPU with more of them,
    other GPU models (of compute capability `min_compute` or newer), several nodes when the
    engine allows, then fp8 weights (`fp8_bytes=None` when fp8 is not an option).

    Example:
        >>> from gkeml_sdk.serving.sizing import ModelShape
        >>> shape = ModelShape(70.0, 80, 64, 8, 128)
        >>> inp = SizingInput(shape, 2.0, 2.0, 24, 8, 0.9, 8192, tensor_parallel=1)
        >>> alternatives(inp, "l4", fp8_bytes=1.0)[:2]
        ['L4 x8 (TP8)', 'B200 x1 (TP1)']
    """
    book = prices or PriceBook.default()
    free = replace(inp, tensor_parallel=None, pipeline_parallel=None)
    single = replace(free, multi_host=False)
    # Engine images are x86 first: arm64 nodes are a deliberate choice, not a suggestion.
    usable = [g for g in gpus.GPUS if g.arch == "amd64" and g.compute_capability >= min_compute]
    options: list[tuple[int, float, str]] = []
    for row in usable:
        found = choose(_on(single, row))
        if found is not None:
            rank = 0 if row.key == gpu_key else 1
            options.append((rank, _hourly(book, row.key, found), _label(row.key, found)))
    options.sort(key=lambda o: (o[0], o[1]))
    picked = [label for _, _, label in options[:limit]]
    current = gpus.gpu(gpu_key)
    if inp.multi_host and not any(p.startswith(current.key.upper() + " ") for p in picked):
        spread = choose(_on(free, current))
        if spread is not None and spread.multi_host:
            picked.append(_label(current.key, spread))
    if fp8_bytes is not None and inp.weight_bytes > fp8_bytes:
        fp8 = [
            (_hourly(book, row.key, f), f"fp8 on {_label(row.key, f)}")
            for row in usable
            if row.compute_capability >= catalog.weight_format("fp8").min_compute
            and (f := choose(_on(replace(single, weight_bytes=fp8_bytes), row))) is not None
        ]
        if fp8:
            picked.append(min(fp8)[1])
    return picked


def _chosen(svc: ServeFields) -> bool:
    # Pinned tensor and pipeline parallelism is a shape the user wrote, not one we chose.
    return svc.tensor_parallel == "auto" or svc.pipeline_parallel == "auto"


def _past_request(svc: ServeFields, fit: Fit) -> bool:
    return fit.gpus > svc.accelerator.count or fit.multi_host


def _shorter_context(tokens_per_sequence: int) -> int:
    length = 1 << max(tokens_per_sequence, 1).bit_length() - 1
    return length if length >= 1024 else 0


def _or_join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + ", or " + items[-1]


def _on(inp: SizingInput, row: gpu_row.GpuModel) -> SizingInput:
    return replace(inp, gpu_memory_gb=float(row.memory_gb), gpus_per_node=row.max_gpus_per_node)


def _hourly(book: PriceBook, key: str, fit: Fit) -> float:
    # On-demand only: ranking a Spot price against on-demand ones would flatter it.
    unit = book.price(key).on_demand
    return math.inf if unit is None else unit * fit.gpus


def _label(key: str, fit: Fit) -> str:
    name = key.upper()
    if fit.multi_host:
        return (
            f"{fit.pods} nodes of {name} x{fit.gpus_per_pod} "
            f"(TP{fit.tensor_parallel} x PP{fit.pipeline_parallel})"
        )
    pp = f" x PP{fit.pipeline_parallel}" if fit.pipeline_parallel > 1 else ""
    return f"{name} x{fit.gpus} (TP{fit.tensor_parallel}{pp})"
