"""Name, label and annotation rules the API server and the JobSet/LWS/Kueue webhooks apply to
what the SDK sends (../shared/reference/admission-rules.md §1.2, §1.3, §2.2, §3.1, §3.3), as a
pure function over one compiled object: `name_errors(obj) -> list[str]` (empty = accepted).

Written from the reference independently of gkeml_sdk, so it can catch the model rules
accepting a name that the cluster would refuse."""

from __future__ import annotations

import re
from typing import Any

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
PORT_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")  # IANA_SVC_NAME, <= 15, >= 1 letter
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
INT32_MAX = 2**31 - 1
# Kinds whose metadata.name must be a DNS-1035 label (they name a Service or generated labels).
DNS1035_KINDS = {"JobSet", "LeaderWorkerSet", "Service"}


def name_errors(obj: dict[str, Any]) -> list[str]:
    """Every reason the API server or an admission webhook would refuse `obj`'s names."""
    errors: list[str] = []
    meta = obj.get("metadata", {})
    kind, name = obj.get("kind", "?"), meta.get("name", "")
    _subdomain(errors, f"{kind} metadata.name", name)
    if kind in DNS1035_KINDS and not _full(DNS1035_LABEL, name, 63):
        errors.append(f"{kind} name {name!r} is not a DNS-1035 label")
    if "namespace" in meta and not _full(DNS1123_LABEL, meta["namespace"], 63):
        errors.append(f"namespace {meta['namespace']!r} is not a DNS-1123 label")
    _metadata(errors, kind, meta)
    for path, template in _pod_templates(obj):
        _metadata(errors, f"{kind} {path}", template.get("metadata", {}))
        _pod_spec(errors, f"{kind} {path}", template.get("spec", {}))
    if kind == "JobSet":
        _jobset(errors, obj)
    if kind == "ConfigMap":
        data = obj.get("data", {})
        for key in data:
            if not config_map_key_ok(key):
                errors.append(f"ConfigMap key {key!r} is invalid")
        if sum(_bytes(v) for v in data.values()) > 1024 * 1024:  # ValidateConfigMap
            errors.append("ConfigMap data exceeds 1 MiB")
    return errors


def _full(pattern: re.Pattern[str], value: Any, limit: int) -> bool:
    return isinstance(value, str) and _bytes(value) <= limit and bool(pattern.fullmatch(value))


def _subdomain(errors: list[str], where: str, value: Any) -> None:
    if not _full(DNS1123_SUBDOMAIN, value, 253):
        errors.append(f"{where} {value!r} is not a DNS-1123 subdomain")


def _qualified_key(key: str) -> bool:
    # IsQualifiedName: at most one '/', and then a non-empty DNS subdomain before it.
    parts = key.split("/")
    if len(parts) > 2 or (len(parts) == 2 and not _full(DNS1123_SUBDOMAIN, parts[0], 253)):
        return False
    return _full(QUALIFIED_NAME, parts[-1], 63)


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))  # Go's len() of a string


def config_map_key_ok(key: str) -> bool:
    """IsConfigMapKey: <= 253 bytes of [-._a-zA-Z0-9], not '.', '..' or '..'-prefixed."""
    return (
        _bytes(key) <= 253 and bool(CONFIGMAP_KEY.fullmatch(key)) and not key.startswith("..")
    ) and key != "."


def _metadata(errors: list[str], where: str, meta: dict[str, Any]) -> None:
    labels = meta.get("labels", {})
    for key, value in labels.items():
        if not _qualified_key(key):
            errors.append(f"{where}: label key {key!r} is invalid")
        if not _full(LABEL_VALUE, value, 63):
            errors.append(f"{where}: label {key}={value!r} is not a valid label value")
    annotations = meta.get("annotations", {})
    for key, value in annotations.items():
        # ValidateAnnotations: the key lower-cased; ValidateAnnotationsSize: 256 KiB in all.
        if not _qualified_key(key.lower()) or not isinstance(value, str):
            errors.append(f"{where}: annotation {key!r} is invalid")
    if sum(_bytes(k) + _bytes(v) for k, v in annotations.items()) > 256 * 1024:
        errors.append(f"{where}: annotations exceed 256 KiB")
    if QUEUE_LABEL in labels:
        _subdomain(errors, f"{where}: Kueue queue-name", labels[QUEUE_LABEL])
    if MAX_EXEC_LABEL in labels:
        value = labels[MAX_EXEC_LABEL]
        if not (value.isascii() and value.isdigit() and 0 < int(value) <= INT32_MAX):
            errors.append(f"{where}: {MAX_EXEC_LABEL}={value!r} is not an integer > 0")


def _pod_templates(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    spec = obj.get("spec", {})
    found = []
    if obj.get("kind") in ("Job", "Deployment"):
        found.append(("template", spec.get("template", {})))
    for i, rjob in enumerate(spec.get("replicatedJobs", [])):
        found.append((f"replicatedJobs[{i}]", rjob["template"]["spec"]["template"]))
    group = spec.get("leaderWorkerTemplate", {})
    for role in ("leaderTemplate", "workerTemplate"):
        if role in group:
            found.append((role, group[role]))
    for i, pod_set in enumerate(spec.get("podSets", [])):
        found.append((f"podSets[{i}]", pod_set["template"]))
    return found


def _pod_spec(errors: list[str], where: str, spec: dict[str, Any]) -> None:
    if "serviceAccountName" in spec:
        _subdomain(errors, f"{where}: serviceAccountName", spec["serviceAccountName"])
    for key, value in spec.get("nodeSelector", {}).items():
        if not _qualified_key(key) or not _full(LABEL_VALUE, value, 63):
            errors.append(f"{where}: nodeSelector {key}={value!r} is not a valid label")
    for container in spec.get("containers", []):
        for env in container.get("env", []):
            if not _full(ENV_NAME, env["name"], 1 << 16):
                errors.append(f"{where}: env name {env['name']!r} is invalid")
        for port in container.get("ports", []):
            port_name = port.get("name", "p")
            if not (_full(PORT_NAME, port_name, 15) and re.search("[a-z]", port_name)):
                errors.append(f"{where}: port name {port_name!r} is invalid")
    for volume in spec.get("volumes", []):
        if not _full(DNS1123_LABEL, volume["name"], 63):
            errors.append(f"{where}: volume name {volume['name']!r} is invalid")


def _jobset(errors: list[str], obj: dict[str, Any]) -> None:
    name, spec = obj["metadata"]["name"], obj["spec"]
    rules = spec.get("failurePolicy", {}).get("rules", [])
    rule_names = [r.get("name", "") for r in rules]
    for rule_name in rule_names:
        if not _full(RULE_NAME, rule_name, 128):
            errors.append(f"failure policy rule name {rule_name!r} breaks the JobSet regex")
    if len(set(rule_names)) != len(rule_names):
        errors.append(f"failure policy rule names are not unique: {rule_names}")
    subdomain = spec.get("network", {}).get("subdomain", name)
    if not _full(DNS1035_LABEL, subdomain, 63):
        errors.append(f"JobSet subdomain {subdomain!r} is not a DNS-1035 label")
    for rjob in spec["replicatedJobs"]:
        r, replicas = rjob["name"], rjob.get("replicas", 1)
        if not _full(DNS1035_LABEL, r, 63):
            errors.append(f"replicatedJob name {r!r} is not a DNS-1035 label")
        j = str(replicas - 1)
        job_name = f"{name}-{r}-{j}"
        if not _full(DNS1035_LABEL, job_name, 63):
            errors.append(f"JobSet {name!r}: child Job name {job_name!r} exceeds 63 / DNS-1035")
        job_spec = rjob["template"]["spec"]
        completions = job_spec.get("completions")
        if completions is not None:
            p = str(completions - 1)
            if len(name) + len(r) + len(j) + len(p) + 9 > 63:
                errors.append(f"JobSet {name!r}: pod names of {job_name!r} exceed 63 characters")
        if replicas * job_spec.get("parallelism", 1) > INT32_MAX:
            errors.append(f"JobSet {name!r}: replicas x parallelism exceeds int32")
