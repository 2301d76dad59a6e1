"""The checks of a `ServeModel` besides its hardware fit: names, engine options, where weights,
tokens and env come from, replicas, routing, the canary and the Spot mix."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gkeml_sdk.core.credentials import check_argv
from gkeml_sdk.core.lookup import UnknownName
from gkeml_sdk.core.model import DNS1123_LABEL, DNS1123_SUBDOMAIN, fail
from gkeml_sdk.core.rules import ENV_NAME, check_labels, check_name
from gkeml_sdk.core.secret_ref import check_secret_names, looks_secret
from gkeml_sdk.errors import SpecError
from gkeml_sdk.serving import catalog
from gkeml_sdk.serving.catalog import TOKEN_ENV, Engine
from gkeml_sdk.serving.rollout import CANARY_SUFFIX, SPOT_SUFFIX
from gkeml_sdk.storage.checkpoints import parse_checkpoint_dir
from gkeml_sdk.storage.rules import check_volumes

if TYPE_CHECKING:
    from gkeml_sdk.serving.fields import ServeFields

# Deployment pods add two hashes to the name and LWS pods a group and worker index; 40
# characters keeps every derived name within 63.
MAX_NAME_LENGTH = 40
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")  # Service names start with a letter
SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")
ADAPTER_NAME = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*\Z")


def check_names(svc: ServeFields) -> None:
    """Object names, namespace, queue, secret and label syntax.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> try:
        ...     ServeModel(name="Chat_Bot", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"))
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
        check_name(field, value, pattern, limit)
    check_labels(svc.labels)


def check_engine_options(svc: ServeFields) -> None:
    """Options the engine must support: dtype, quantization, KV dtype, LoRA, batch cap.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), engine="tgi", dtype="float32")
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


def check_deployment(svc: ServeFields) -> None:
    """Replicas, the Hub token of gated models and routing support.

    Example:
        >>> from gkeml_sdk.hardware.accelerator import Accelerator
        >>> from gkeml_sdk.serving.model import ServeModel
        >>> try:
        ...     ServeModel(name="qa", model="google/gemma-2-9b-it",
        ...                accelerator=Accelerator("l4"))
        ... except SpecError as exc:
        ...     print(exc.field)
        hf_token_secret
    """
    eng, model = svc.engine_row, svc.resolved
    if isinstance(svc.replicas, int) and svc.replicas < 0:
        raise fail(
            f"replicas={svc.replicas}",
            rule="replicas must be ≥ 0 (0 keeps the service defined but stopped)",
            fix="replicas=1",
            field="replicas",
        )
    hub = eng.downloads_weights and svc.weights is None
    if hub and model.gated and svc.hf_token_secret is None:
        raise fail(
            f"{svc.model} is gated on the Hugging Face Hub and no token secret is named",
            rule="pods download gated weights with a token, read from a Secret (never inline)",
            fix="kubectl create secret generic hf-token --from-literal="
            f"{svc.hf_token_key}=hf_...; then hf_token_secret='hf-token'",
            field="hf_token_secret",
        )
    check_wakes(svc)
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


def check_wakes(svc: ServeFields) -> None:
    """At zero replicas the engine exports no queue: only Istio's request count, or a SpotMix's
    on-demand floor that keeps running, can wake a server that scales to zero."""
    scaling, routing = svc.autoscaling, svc.routing
    if scaling and scaling.to_zero and not svc.spot_mix and (not routing or routing.via != "istio"):
        via = "no routing" if routing is None else f"routing via {routing.via}"
        raise fail(
            f"{svc.name}: Autoscaling(min=0) with {via}",
            rule="at zero replicas KEDA's only signal is the request count Istio's sidecars "
            "report; without it no request wakes the server",
            fix="routing=Routing(via='istio'), spot=SpotMix(on_demand_min=1) (an on-demand "
            "replica always runs), or Autoscaling(min=1, ...)",
            field="replicas",
        )


def check_rollout(svc: ServeFields) -> None:
    """A canary needs routing weights to take its share, and a name that fits its suffix.

    Example:
        >>> from gkeml_sdk import Accelerator, Rollout, ServeModel
        >>> from gkeml_sdk.errors import SpecError
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), rollout=Rollout(strategy="canary"))
        ... except SpecError as exc:
        ...     print(exc.field)
        rollout
    """
    if svc.rollout.strategy != "canary":
        return
    if svc.routing is None or svc.routing.backend_only:
        raise fail(
            f"{svc.name}: a canary rollout without routing",
            rule="a canary takes its share of the requests through the routing weights "
            "(HTTPRoute backendRefs or VirtualService routes)",
            fix="routing=Routing(via='istio') or Routing(via='inference-gateway'), or "
            "Rollout(strategy='surge')",
            field="rollout",
        )
    if len(svc.name) + len(CANARY_SUFFIX) > MAX_NAME_LENGTH:
        keep = MAX_NAME_LENGTH - len(CANARY_SUFFIX)
        raise fail(
            f"name={svc.name!r} is too long for a canary named {svc.name + CANARY_SUFFIX!r}",
            rule=f"derived names stay within {MAX_NAME_LENGTH} characters",
            fix=f"name={svc.name[:keep].rstrip('-')!r}",
            field="name",
        )


def check_spot_mix(svc: ServeFields) -> None:
    """The Spot part's name fits, and the GPU is sold on-demand for the floor.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel, SpotMix
        >>> ServeModel(name="chat", model="Qwen/Qwen2.5-7B-Instruct",
        ...            accelerator=Accelerator("l4"), spot=SpotMix()).spot_mix
        SpotMix(on_demand_min=1)
    """
    if svc.spot_mix is None:
        return
    if len(svc.name) + len(SPOT_SUFFIX) > MAX_NAME_LENGTH:
        keep = MAX_NAME_LENGTH - len(SPOT_SUFFIX)
        raise fail(
            f"name={svc.name!r} is too long for a Spot part named {svc.name + SPOT_SUFFIX!r}",
            rule=f"derived names stay within {MAX_NAME_LENGTH} characters",
            fix=f"name={svc.name[:keep].rstrip('-')!r}",
            field="name",
        )
    svc.accelerator.check_provisioning(spot=False)  # the floor runs on on-demand nodes


def check_weights(svc: ServeFields) -> None:
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


def check_serving_env(svc: ServeFields) -> None:
    """Secret references are valid and unique; plain env that looks secret is refused unless
    `not_secret` names it.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> from gkeml_sdk.errors import SpecError
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), env={"VLLM_API_KEY": "s3cret"})
        ... except SpecError as exc:
        ...     print(exc.fix)  # doctest: +ELLIPSIS
        secret_env={'VLLM_API_KEY': 'SECRET/KEY'} (kubectl create secret ...
    """
    engine_env = {name for name, _ in svc.engine_row.cache_env}
    reserved = engine_env | (set(TOKEN_ENV) if svc.hf_token_secret else set())
    check_secret_names(svc.secret_env, svc.env, reserved, "the engine's token and cache variables")
    check_argv(svc.extra_args, "extra_args")
    for name, value in svc.env.items():
        if name in svc.not_secret or not looks_secret(name, value):
            continue
        raise fail(
            f"env {name} looks like a credential",
            rule="plain env is written into the Deployment, which everyone who can read it "
            "sees; credentials come from a Secret",
            fix=f"secret_env={{{name!r}: 'SECRET/KEY'}} (kubectl create secret generic SECRET "
            f"--from-literal=KEY=...), or not_secret=[{name!r}] if it holds no credential",
            field="env",
        )


def _check_quantization(svc: ServeFields, eng: Engine, quant: str) -> None:
    try:
        fmt = catalog.weight_format(quant)
    except UnknownName as exc:
        raise fail(str(exc), fix=f"quantization={exc.closest or 'fp8'!r}") from None
    if not eng.supports_quantization(quant):
        others = [e.key for e in catalog.ENGINES if e.supports_quantization(quant)]
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


def _check_lora(svc: ServeFields, eng: Engine) -> None:
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


def _check_sources(svc: ServeFields, eng: Engine) -> None:
    if not eng.downloads_weights and svc.model_repository is None and svc.weights is None:
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
    owned = {*TOKEN_ENV, *dict(eng.cache_env)}
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
