"""`ServePlan`: what a `ServeModel` will run and cost, as a typed object, a printable table and a
picture of one GPU's memory.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gkeml_sdk.pictures.bars import Part, memory_svg
from gkeml_sdk.pricing.catalog import PriceBook, PriceOverrides
from gkeml_sdk.serving.hardware_rules import does_not_fit, scale_up_sentence
from gkeml_sdk.serving.sizing import Fit, expected_startup_seconds, startup_seconds
from gkeml_sdk.storage import catalog as storage

if TYPE_CHECKING:
    from gkeml_sdk.hardware.accelerator import Accelerator
    from gkeml_sdk.serving.fields import ServeFields

KIB = 1024
# A label stays on one line, beside its value, however narrow the page: the value wraps.
LABEL = "text-align:left;vertical-align:top;white-space:nowrap;padding-right:1em"


@dataclass(frozen=True)
class ServePlan:
    """GPUs per replica, parallelism, memory per GPU, concurrency and cost of a service.

    Example:
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> plan = ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...                   accelerator=Accelerator("l4")).plan()
        >>> plan.gpus_per_replica, plan.fit.tensor_parallel, plan.machine_type
        (1, 1, 'g2-standard-4')
    """

    name: str
    engine: str
    model: str
    model_display: str
    gpu: str
    fit: Fit
    machine_type: str
    weights_format: str
    kv_format: str
    min_replicas: int
    max_replicas: int
    scaling: str
    gpu_share: float  # physical GPUs per requested GPU (below 1 for a MIG slice)
    price_on_demand: float | None  # per GPU-hour
    price_spot: float | None
    spot: bool
    startup_seconds: int
    price_source: str
    as_of: str
    expected_startup_seconds: int = 0  # init + reading the weights from where they are
    weights_source: str = ""
    on_demand_floor: int = 0  # SpotMix: on-demand replicas besides the Spot ones
    # The GPUs per replica the spec wrote, when gkeml chose more to hold the model; the
    # plan says so beside the GPUs and the cost, where the price multiplies.
    sized_up_from: int | None = None

    @property
    def gpus_per_replica(self) -> int:
        """GPUs (or MIG slices) one replica requests."""
        return self.fit.gpus

    def cost_per_replica_hour(self, provisioning: str = "") -> float | None:
        """USD per replica-hour, 'on-demand' or 'spot' (default: what the service uses)."""
        wanted = provisioning or ("spot" if self.spot else "on-demand")
        unit = self.price_spot if wanted == "spot" else self.price_on_demand
        return None if unit is None else unit * self.gpus_per_replica * self.gpu_share

    def cost_per_hour(self, replicas: int | None = None) -> float | None:
        """USD per hour at `replicas` (default: the minimum), with the service's provisioning."""
        per = self.cost_per_replica_hour()
        count = self.min_replicas if replicas is None else replicas
        if per is None:
            return None
        if not self.on_demand_floor:
            return per * count
        floor = self.cost_per_replica_hour("on-demand")
        return None if floor is None else per * count + floor * self.on_demand_floor

    def rows(self) -> list[tuple[str, str]]:
        """The table as (label, value) pairs."""
        f = self.fit
        shape = f"TP{f.tensor_parallel} x PP{f.pipeline_parallel}"
        where = (
            f"{f.pods} pods (one per {self.machine_type} node), LeaderWorkerSet"
            if f.multi_host
            else f"1 pod on {self.machine_type}, Deployment"
        )
        rows = [
            ("GPUs per replica", f"{f.gpus} x {self.gpu} ({shape}); {where}"),
            *self._sized_up(),
            (
                "weights",
                f"{f.weights_gb:.1f} GB {self.weights_format} -> {f.weights_gb_per_gpu:.1f} GB "
                "per GPU",
            ),
            (
                "memory per GPU",
                f"{f.gpu_memory_gb:.1f} GB x {f.usable_gb / f.gpu_memory_gb:.2f} = "
                f"{f.usable_gb:.1f} GB: {f.weights_gb_per_gpu:.1f} weights + "
                f"{f.overhead_gb:.1f} activations + {f.kv_gb_per_gpu:.1f} KV cache",
            ),
            (
                "KV cache",
                f"{f.kv_bytes_per_token / KIB:.4g} KiB/token {self.kv_format} "
                f"({f.kv_bytes_per_token_per_gpu / KIB:.4g} KiB per GPU) -> "
                f"{f.kv_tokens:,} tokens per replica",
            ),
            (
                "max concurrency",
                f"{f.max_concurrency:.1f} requests of {f.max_model_len:,} tokens per replica "
                f"(target {f.sequences})",
            ),
            ("replicas", f"{self._replicas()}, {self.scaling}"),
        ]
        if self.on_demand_floor:
            rows.append(
                ("on-demand floor", f"{self.on_demand_floor} replica(s) besides the Spot ones")
            )
        for provisioning in ("on-demand", "spot"):
            mark = " <- this service" if (provisioning == "spot") == self.spot else ""
            rows.append((f"cost/hour {provisioning}", self._cost(provisioning) + mark))
        rows.append(("weights from", self.weights_source))
        rows.append(
            (
                "start-up",
                f"~{self.expected_startup_seconds} s expected; probe budget "
                f"{self.startup_seconds} s",
            )
        )
        prices = f"accelerator component only; {self.price_source}, as of {self.as_of}"
        rows.append(("prices", prices))
        return rows

    def __str__(self) -> str:
        head = f"ServeModel {self.name!r}: {self.model} ({self.model_display}) on {self.engine}"
        width = max(len(label) for label, _ in self.rows())
        lines = [head, *(f"  {label:<{width}}  {value}" for label, value in self.rows())]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><th style='{LABEL}'>{html.escape(k)}</th>"
            f"<td style='overflow-wrap:anywhere'>{html.escape(v)}</td></tr>"
            for k, v in self.rows()
        )
        caption = html.escape(f"{self.name}: {self.model} on {self.engine}")
        return f"{plan_svg(self)}<table><caption>{caption}</caption>{body}</table>"

    def _replicas(self) -> str:
        if self.min_replicas == self.max_replicas:
            return str(self.min_replicas)
        return f"{self.min_replicas}-{self.max_replicas}"

    def _sized_up(self) -> list[tuple[str, str]]:
        asked = self.sized_up_from
        if asked is None:
            return []
        text = f"from the {asked} written, which cannot hold the model ({self.fit.gpus / asked:g}x "
        return [("sized up", text + f"the price); max_gpus={asked} refuses instead")]

    def _cost(self, provisioning: str) -> str:
        per = self.cost_per_replica_hour(provisioning)
        if per is None:
            return "no list price (set one with plan(prices=...))"
        text = f"${per:,.2f} per replica"
        if self.max_replicas != self.min_replicas:
            text += f", ${per * self.min_replicas:,.2f}-${per * self.max_replicas:,.2f} in all"
        elif self.min_replicas != 1:
            text += f", ${per * self.min_replicas:,.2f} in all"
        return text


def build_plan(
    svc: ServeFields, prices: PriceBook | PriceOverrides | str | None = None
) -> ServePlan:
    """The plan of `svc` (see `ServeModel.plan`).

    Example:
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                  accelerator=Accelerator("l4"), spot=True)
        >>> round(build_plan(svc).cost_per_hour(), 4)
        0.2231
    """
    fit = svc.fit
    if fit is None:  # construction already refused this spec; kept for type narrowing
        raise does_not_fit(svc)
    acc, eng = svc.accelerator, svc.engine_row
    book = PriceBook.of(prices)
    price = book.price(acc.price_key)
    scale = svc.autoscaling
    if scale is None:
        scaling = "fixed (no autoscaling)"
    else:
        kind, idle = ("KEDA", "; to zero when idle") if scale.to_zero else ("HPA", "")
        metric = eng.scaling_metric(scale.signal).name
        scaling = f"{kind} on {metric} (target {scale.target:g} per replica{idle})"
    gpu = acc.gpu.display + (f" {acc.mig} slice" if acc.mig else "")
    load = load_gb_per_second(svc)
    return ServePlan(
        name=svc.name,
        engine=eng.display,
        model=svc.model,
        model_display=svc.resolved.display,
        gpu=gpu,
        fit=fit,
        machine_type=machine_type(svc, fit),
        weights_format=svc.weight_quantization or svc.dtype,
        kv_format="fp8" if svc.kv_cache_dtype == "fp8" else svc.dtype,
        min_replicas=svc.min_replicas,
        max_replicas=svc.max_replicas,
        scaling=scaling,
        gpu_share=acc.physical_gpus / acc.count,
        price_on_demand=price.on_demand if _on_demand(acc, machine_type(svc, fit)) else None,
        price_spot=price.spot,
        spot=bool(svc.spot),
        on_demand_floor=svc.spot_mix.on_demand_min if svc.spot_mix else 0,
        startup_seconds=svc.startup_timeout_seconds or startup_seconds(fit.weights_gb, load),
        price_source=book.source,
        as_of=book.as_of,
        expected_startup_seconds=expected_startup_seconds(fit.weights_gb, load),
        weights_source=weights_source(svc),
        sized_up_from=acc.count if scale_up_sentence(svc) and fit.gpus > acc.count else None,
    )


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
        f"{f.gpus} x {plan.gpu} per replica ({shape}) on {plan.machine_type}"
        + (f" (sized up from {plan.sized_up_from})" if plan.sized_up_from is not None else "")
        + "; "
        f"{f.kv_tokens:,} KV tokens, {f.max_concurrency:.1f} requests of {f.max_model_len:,}",
        f"replicas {plan._replicas()}, {plan.scaling}",
    ]
    for provisioning in ("on-demand", "spot"):
        mark = " (this service)" if (provisioning == "spot") == plan.spot else ""
        summary.append(f"{provisioning}: {plan._cost(provisioning)}{mark}")
    title = f"{plan.name}: memory of one {plan.gpu} ({f.gpu_memory_gb:.0f} GB)"
    return memory_svg(title, f.gpu_memory_gb, parts, summary)


def load_gb_per_second(svc: ServeFields) -> float | None:
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


def weights_source(svc: ServeFields) -> str:
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


def machine_type(svc: ServeFields, fit: Fit) -> str:
    """The node machine type a pod of `svc` needs: the user's, or the smallest that holds it.

    Example:
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> svc = ServeModel(name="a", model="Qwen/Qwen2.5-72B-Instruct",
        ...                  accelerator=Accelerator("h200", count=8))
        >>> machine_type(svc, svc.fit)
        'a3-ultragpu-8g'
    """
    acc = svc.accelerator
    if acc.machine_type is not None or acc.count > 1 or acc.mig is not None:
        return acc.node_machine.name
    row = acc.gpu
    # On-demand capacity only exists on some shapes (A3 High 1g/2g/4g are Spot or flex-start).
    usable = [m for m in row.machine_types if svc.spot or m.on_demand]
    count = min(m.gpus for m in usable if m.gpus >= fit.gpus_per_pod)
    return next(m.name for m in usable if m.gpus == count)


def _on_demand(acc: Accelerator, machine: str) -> bool:
    if acc.mig is not None and acc.machine_type is None:
        return acc.on_demand_offered  # a MIG pool may use any of the GPU's shapes
    found = acc.gpu.machine_named(machine)
    return found is None or found.on_demand
