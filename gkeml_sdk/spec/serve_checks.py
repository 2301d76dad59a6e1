"""The rules a `ServeModel` must satisfy, one function per concern. Each raises `SpecError`
with the numbers and what would work; `ServeModel` runs them all at construction.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gkeml_sdk.catalog import engines, gpus, models
from gkeml_sdk.catalog.names import UnknownName
from gkeml_sdk.errors import SpecError
from gkeml_sdk.spec.base import DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE, QUALIFIED_NAME, fail
from gkeml_sdk.spec.sizing import (
    ACTIVATION_OVERHEAD_GB,
    alternatives,
    choose,
    evaluate,
    shapes,
    valid_tensor_parallel,
)
from gkeml_sdk.spec.storage import parse_checkpoint_dir

if TYPE_CHECKING:
    from gkeml_sdk.spec.serve import ServeModel

# Deployment pods add two hashes to the name and LWS pods a group and worker index; 40
# characters keeps every derived name within 63.
MAX_NAME_LENGTH = 40
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")  # Service names start with a letter
SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
ADAPTER_NAME = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")


def check_names(svc: ServeModel) -> None:
    """Object names, namespace, queue, secret and label syntax.

    Example:
        >>> from gkeml_sdk.spec.accelerator import Accelerator
        >>> from gkeml_sdk.spec.serve import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), **dict(name="Chat_Bot"))
        ... except SpecError as exc:
        ...     print(exc.field)
        name
    """
    if len(svc.name) > MAX_NAME_LENGTH or not DNS1035_LABEL.match(svc.name):
        suggestion = re.sub(r"[^a-z0-9-]+", "-", svc.name.lower()).strip("-")
        suggestion = suggestion.lstrip("0123456789-")[:MAX_NAME_LENGTH] or "chat"
        raise fail(
            f"name={svc.name!r} is not a valid service name",
            rule="a Service name starts with a letter, has lower-case letters, digits and '-', "
            f"and stays within {MAX_NAME_LENGTH} characters here so derived pod names fit",
            fix=f"name={suggestion!r}",
            field="name",
        )
    if svc.name in svc.engine_row.reserved_names:
        raise fail(
            f"name={svc.name!r} with {svc.engine_row.display}",
            rule=f"a Service called {svc.name!r} injects {svc.name.upper()}_PORT, which the "
            "engine reads as its own setting and crashes",
            fix=f"name='{svc.name}-chat'",
            field="name",
        )
    for field, value, pattern, limit in (
        ("namespace", svc.namespace, DNS1123_LABEL, 63),
        ("queue", svc.queue, DNS1123_SUBDOMAIN, 63),
        ("priority_class", svc.priority_class, DNS1123_SUBDOMAIN, 253),
        ("service_account", svc.service_account, DNS1123_SUBDOMAIN, 253),
        ("hf_token_secret", svc.hf_token_secret, DNS1123_SUBDOMAIN, 253),
        ("hf_token_key", svc.hf_token_key, SECRET_KEY, 253),
    ):
        if value is not None and (len(value) > limit or not pattern.match(value)):
            raise fail(
                f"{field}={value!r} is not a valid Kubernetes name",
                rule="lower-case letters, digits, '-' (and '.'), starting and ending alphanumeric",
                fix=f"{field}={re.sub(r'[^a-z0-9.-]+', '-', value.lower()).strip('-.')!r}",
                field=field,
            )
    for key, value in svc.labels.items():
        prefix, _, name = key.rpartition("/")
        key_ok = QUALIFIED_NAME.match(name) and len(name) <= 63
        if not key_ok or (prefix and not DNS1123_SUBDOMAIN.match(prefix)):
            raise fail(f"label key {key!r} is invalid", fix="e.g. team: vision", field="labels")
        if len(value) > 63 or not LABEL_VALUE.match(value):
            raise fail(
                f"label value {value!r} for {key!r} is invalid",
                rule="label values are <= 63 alphanumerics, '-', '_', '.'",
                fix="shorten it",
                field="labels",
            )


def check_engine_options(svc: ServeModel) -> None:
    """Options the engine must support: dtype, quantization, KV dtype, LoRA, batch cap.

    Example:
        >>> from gkeml_sdk.spec.accelerator import Accelerator
        >>> from gkeml_sdk.spec.serve import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), **dict(engine="tgi", dtype="float32"))
        ... except SpecError as exc:
        ...     print(exc.field)
        dtype
    """
    eng = svc.engine_row
    if svc.dtype not in eng.dtypes:
        raise fail(
            f"dtype={svc.dtype!r} with {eng.display}",
            rule=f"{eng.display} runs {', '.join(eng.dtypes)}",
            fix=f"dtype={eng.dtypes[0]!r}",
            field="dtype",
        )
    if svc.quantization is not None:
        _check_quantization(svc, eng, svc.quantization)
    if svc.kv_cache_dtype != "auto" and svc.kv_cache_dtype not in dict(eng.kv_cache_dtypes):
        raise fail(
            f"kv_cache_dtype={svc.kv_cache_dtype!r} with {eng.display}",
            rule=f"{eng.display} keeps the KV cache in the model dtype",
            fix="kv_cache_dtype='auto', or engine='vllm'",
            field="kv_cache_dtype",
        )
    if not svc.prefix_caching and eng.flags.prefix_caching is None:
        raise fail(
            f"prefix_caching=False with {eng.display}",
            rule=f"{eng.display} has no runtime switch for prefix caching",
            fix="drop prefix_caching",
            field="prefix_caching",
        )
    if svc.max_batch_size is not None and (
        eng.flags.max_batch_size is None or svc.max_batch_size < 1
    ):
        why = (
            "a positive number of sequences"
            if eng.flags.max_batch_size
            else f"{eng.display} sets its batch limit elsewhere (token budget or engine build)"
        )
        raise fail(
            f"max_batch_size={svc.max_batch_size} with {eng.display}",
            rule=why,
            fix="drop max_batch_size",
            field="max_batch_size",
        )
    _check_lora(svc, eng)
    _check_sources(svc, eng)
    if not 0 < svc.gpu_memory_utilization <= 1:
        raise fail(
            f"gpu_memory_utilization={svc.gpu_memory_utilization}",
            rule="a fraction of each GPU's memory, leaving room for CUDA context and NCCL",
            fix="gpu_memory_utilization=0.9",
            field="gpu_memory_utilization",
        )
    if svc.longest_request_seconds < 1 or (svc.startup_timeout_seconds or 60) < 60:
        raise fail(
            "longest_request_seconds must be >= 1 and startup_timeout_seconds >= 60",
            fix="longest_request_seconds=60; leave startup_timeout_seconds unset",
        )


def check_accelerator(svc: ServeModel) -> None:
    """GPU generation, sharing and MIG limits for a model server.

    Example:
        >>> from gkeml_sdk.spec.accelerator import Accelerator
        >>> from gkeml_sdk.spec.serve import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), **dict(accelerator=Accelerator("t4")))
        ... except SpecError as exc:
        ...     print(exc.field)
        accelerator
    """
    acc = svc.accelerator
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
        >>> from gkeml_sdk.spec.accelerator import Accelerator
        >>> from gkeml_sdk.spec.serve import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), **dict(tensor_parallel=8))
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
        >>> from gkeml_sdk.spec.accelerator import Accelerator
        >>> from gkeml_sdk.spec.serve import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), **dict(max_model_len=65536))
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


def check_deployment(svc: ServeModel) -> None:
    """Replicas, the Hub token of gated models and routing support.

    Example:
        >>> from gkeml_sdk.spec.accelerator import Accelerator
        >>> from gkeml_sdk.spec.serve import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), **dict(model="google/gemma-2-9b-it"))
        ... except SpecError as exc:
        ...     print(exc.field)
        hf_token_secret
    """
    eng, model = svc.engine_row, svc.resolved
    if isinstance(svc.replicas, int) and svc.replicas < 0:
        raise fail(
            f"replicas={svc.replicas}",
            rule="a replica count (0 keeps the service defined but stopped)",
            fix="replicas=1",
            field="replicas",
        )
    if eng.downloads_weights and model.gated and svc.hf_token_secret is None:
        raise fail(
            f"{svc.model} is gated on the Hugging Face Hub and no token secret is named",
            rule="pods download gated weights with a token, read from a Secret (never inline)",
            fix="kubectl create secret generic hf-token --from-literal="
            f"{svc.hf_token_key}=hf_...; then hf_token_secret='hf-token'",
            field="hf_token_secret",
        )
    routing = svc.routing
    if routing is None:
        return
    if routing.via == "inference-gateway" and eng.gateway_engine_type is None:
        raise fail(
            f"{eng.display} behind the Inference Gateway",
            rule="the endpoint picker scores pods by metrics only vLLM-compatible servers and "
            "Triton expose",
            fix="routing=Routing(via='istio', ...), or engine='vllm'",
            field="routing",
        )
    if routing.routes and not any(svc.name in r.backends for r in routing.routes):
        raise fail(
            f"routes of {svc.name!r} never send traffic to {svc.name!r}",
            rule="a service's routes include it as a backend",
            fix=f"add {svc.name!r} to a route's backends",
            field="routing",
        )


def does_not_fit(svc: ServeModel) -> SpecError:
    """The error for a model that fits no allowed shape, with the numbers and options.

    Example:
        >>> from gkeml_sdk.spec.accelerator import Accelerator
        >>> from gkeml_sdk.spec.serve import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), **dict(max_model_len=32768, concurrency=16, tensor_parallel=1))
        ... except SpecError as exc:
        ...     print(exc.field)
        accelerator
    """
    inp, eng, acc = svc.sizing_input(), svc.engine_row, svc.accelerator
    tried = shapes(inp)
    worst = tried[-1] if tried else evaluate(inp, inp.tensor_parallel or 1, 1, 1)
    fp8 = models.weight_format("fp8").bytes_per_param if eng.supports_quantization("fp8") else None
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


def _check_quantization(svc: ServeModel, eng: engines.Engine, quant: str) -> None:
    try:
        fmt = models.weight_format(quant)
    except UnknownName as exc:
        raise fail(str(exc), fix=f"quantization={exc.closest or 'fp8'!r}") from None
    if not eng.supports_quantization(quant):
        others = [e.key for e in engines.ENGINES if e.supports_quantization(quant)]
        raise fail(
            f"{eng.display} does not serve quantization={quant!r}",
            rule=f"{eng.display} supports {', '.join(q for q, _ in eng.quantizations)}",
            fix="quantization= one of those" + (f", or engine={others[0]!r}" if others else ""),
            field="quantization",
        )
    if fmt.prequantized and svc.resolved.in_catalog and eng.downloads_weights:
        raise fail(
            f"quantization={quant!r} needs a checkpoint exported as {quant.upper()}; "
            f"{svc.model} holds the original weights",
            rule="AWQ and GPTQ load weights quantized offline; fp8, int8 and bitsandbytes "
            "quantize while loading",
            fix=f"model='<an {quant.upper()} export repo>', model_size={svc.model!r}; "
            "or quantization='fp8'",
            field="quantization",
        )


def _check_lora(svc: ServeModel, eng: engines.Engine) -> None:
    if not svc.lora_adapters:
        return
    if eng.flags.lora_modules is None:
        raise fail(
            f"lora_adapters with {eng.display}",
            rule="ServeModel compiles multi-LoRA serving for vLLM",
            fix="engine='vllm', or merge the adapter into the weights",
            field="lora_adapters",
        )
    for name in svc.lora_adapters:
        if not ADAPTER_NAME.match(name):
            raise fail(f"LoRA adapter name {name!r}", fix="e.g. 'sql-lora'", field="lora_adapters")
    if svc.max_lora_rank < 1:
        raise fail(f"max_lora_rank={svc.max_lora_rank}", fix="max_lora_rank=16")


def _check_sources(svc: ServeModel, eng: engines.Engine) -> None:
    if not eng.downloads_weights and svc.model_repository is None:
        raise fail(
            f"{eng.display} serves a model repository and none is given",
            rule="the pod loads a TensorRT-LLM engine built offline, not Hub weights",
            fix="model_repository='gs://BUCKET/PATH' (inflight_batcher_llm layout)",
            field="model_repository",
        )
    if eng.downloads_weights and svc.model_repository is not None:
        raise fail(
            f"model_repository with {eng.display}",
            rule=f"{eng.display} loads model={svc.model!r} itself",
            fix="drop model_repository",
            field="model_repository",
        )
    if svc.model_repository is not None:
        try:
            parse_checkpoint_dir(svc.model_repository)
        except SpecError:
            raise fail(
                f"model_repository={svc.model_repository!r}",
                rule="a repository pods can read: a Cloud Storage bucket, a PVC or a path",
                fix="'gs://BUCKET/PATH', 'pvc://CLAIM/PATH' or '/models'",
                field="model_repository",
            ) from None
    owned = {*engines.TOKEN_ENV, *dict(eng.cache_env)}
    for key in svc.env:
        if key in owned or not ENV_NAME.match(key):
            raise fail(
                f"env {key!r}",
                rule="tokens come from a Secret reference, never inline; cache paths are set "
                "by gkeml; names are letters, digits, '_', '-', '.'",
                fix="hf_token_secret='hf-token' for tokens; remove or rename the others",
                field="env",
            )
    flags = {
        f for v in eng.flags.__dict__.values() if v for f in ((v,) if isinstance(v, str) else v)
    }
    for arg in svc.extra_args:
        if arg.split("=", 1)[0] in flags:
            raise fail(
                f"extra_args repeats {arg.split('=', 1)[0]}",
                rule="gkeml sets that flag from a ServeModel field",
                fix="set the field instead (see ServeModel fields)",
                field="extra_args",
            )


def _shorter_context(tokens_per_sequence: int) -> int:
    length = 1 << max(tokens_per_sequence, 1).bit_length() - 1
    return length if length >= 1024 else 0


def _or_join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + ", or " + items[-1]
