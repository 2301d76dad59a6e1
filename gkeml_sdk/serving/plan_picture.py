"""A serving plan in a notebook: one GPU's memory as a bar (weights, activations, KV cache,
free), the replicas and what they cost, then the plan's table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.pictures.bars import Part, memory_svg

if TYPE_CHECKING:
    from gkeml_sdk.serving.plan import ServePlan


def plan_svg(plan: ServePlan) -> str:
    """The per-GPU memory bar with a replica and cost summary under it.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> plan = ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...                   accelerator=Accelerator("l4")).plan()
        >>> 'data-picture="gpu-memory"' in plan_svg(plan)
        True
    """
    f = plan.fit
    parts = [
        Part("weights", f.weights_gb_per_gpu),
        Part("activations", f.overhead_gb),
        Part("KV cache", f.kv_gb_per_gpu),
    ]
    shape = f"TP{f.tensor_parallel} x PP{f.pipeline_parallel}"
    summary = [
        f"{f.gpus} x {plan.gpu} per replica ({shape}) on {plan.machine_type}; "
        f"{f.kv_tokens:,} KV tokens, {f.max_concurrency:.1f} requests of {f.max_model_len:,}",
        f"replicas {plan._replicas()}, {plan.scaling}",
    ]
    for provisioning in ("on-demand", "spot"):
        mark = " (this service)" if (provisioning == "spot") == plan.spot else ""
        summary.append(f"{provisioning}: {plan._cost(provisioning)}{mark}")
    title = f"{plan.name}: memory of one {plan.gpu} ({f.gpu_memory_gb:.0f} GB)"
    return memory_svg(title, f.gpu_memory_gb, parts, summary)
