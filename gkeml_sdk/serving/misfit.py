"""The error for a model server that fits no allowed shape: the numbers, and the shapes,
GPUs or settings that would fit, cheapest first."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail
from gkeml_sdk.errors import SpecError
from gkeml_sdk.hardware import gpu_row, gpus
from gkeml_sdk.pricing.catalog import PriceBook
from gkeml_sdk.serving import weight_formats
from gkeml_sdk.serving.sizing import (
    ACTIVATION_OVERHEAD_GB,
    Fit,
    SizingInput,
    choose,
    evaluate,
    shapes,
)

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel


def does_not_fit(svc: ServeModel) -> SpecError:
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
    fp8 = (
        weight_formats.weight_format("fp8").bytes_per_param
        if eng.supports_quantization("fp8")
        else None
    )
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
            if row.compute_capability >= weight_formats.weight_format("fp8").min_compute
            and (f := choose(_on(replace(single, weight_bytes=fp8_bytes), row))) is not None
        ]
        if fp8:
            picked.append(min(fp8)[1])
    return picked


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
