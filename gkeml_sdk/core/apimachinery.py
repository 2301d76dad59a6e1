"""The API server's own checks of names, labels, annotations and ConfigMaps, as
k8s.io/apimachinery (pkg/util/validation, pkg/api/validation) and k8s.io/kubernetes
(pkg/apis/core/validation ValidateConfigMap) define them, so a spec the cluster would refuse
is refused before anything is submitted. Each `*_errors` function returns the API server's
reasons (empty: accepted); Go's `len` counts UTF-8 bytes, and so do these."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gkeml_sdk.errors import SpecError, excerpt

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024  # apimachinery TotalAnnotationSizeLimitB
CONFIG_MAP_MAX_SIZE = 1024 * 1024  # core/v1 MaxSecretSize, the limit ValidateConfigMap uses

# Go's regexp anchors ^...$ mean the whole text; Python's `$` also matches before a final
# newline, hence \Z.
DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")  # letter first: Services, JobSets
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
)
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
CONFIG_MAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")


def dns1123_label_errors(value: str) -> list[str]:
    """`IsDNS1123Label`.

    Example:
        >>> dns1123_label_errors("ok-1"), len(dns1123_label_errors("a" * 64))
        ([], 1)
    """
    return _format(value, DNS1123_LABEL, DNS1123_LABEL_MAX, "a lowercase RFC 1123 label")


def dns1123_subdomain_errors(value: str) -> list[str]:
    """`IsDNS1123Subdomain`.

    Example:
        >>> dns1123_subdomain_errors("example.com"), dns1123_subdomain_errors("")
        ([], ['must be a lowercase RFC 1123 subdomain'])
    """
    what = "a lowercase RFC 1123 subdomain"
    return _format(value, DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MAX, what)


def qualified_name_errors(value: str) -> list[str]:
    """`IsQualifiedName`: `[prefix/]name`, a non-empty DNS-1123 subdomain prefix and a name of
    at most 63 alphanumerics, '-', '_', '.'; the key format of labels and annotations.

    Example:
        >>> qualified_name_errors("example.com/owner"), qualified_name_errors("/team")
        ([], ['prefix part must be non-empty'])
    """
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errors = []
    elif len(parts) == 2:
        prefix, name = parts
        errors = (
            ["prefix part must be non-empty"]
            if not prefix
            else [f"prefix part {e}" for e in dns1123_subdomain_errors(prefix)]
        )
    else:
        return ["a qualified name has at most one '/'"]
    if not name:
        return [*errors, "name part must be non-empty"]
    if _size(name) > QUALIFIED_NAME_MAX:
        errors.append(f"name part must be no more than {QUALIFIED_NAME_MAX} characters")
    if not QUALIFIED_NAME.match(name):
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
    return errors


def label_value_errors(value: str) -> list[str]:
    """`IsValidLabelValue`: empty, or at most 63 alphanumerics, '-', '_', '.' starting and
    ending alphanumeric.

    Example:
        >>> label_value_errors(""), len(label_value_errors("a b"))
        ([], 1)
    """
    return _format(
        value,
        LABEL_VALUE,
        LABEL_VALUE_MAX,
        "empty or alphanumerics, '-', '_', '.' between two alphanumerics",
    )


def config_map_key_errors(value: str) -> list[str]:
    """`IsConfigMapKey`: at most 253 of `[-._a-zA-Z0-9]`, and not '.', '..' or '..'-prefixed.

    Example:
        >>> config_map_key_errors("main.py"), config_map_key_errors("..x")
        ([], ["must not start with '..'"])
    """
    errors = []
    if _size(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not CONFIG_MAP_KEY.match(value):
        errors.append("must consist of alphanumeric characters, '-', '_' or '.'")
    if value == ".":
        errors.append("must not be '.'")
    elif value == "..":
        errors.append("must not be '..'")
    elif value.startswith(".."):
        errors.append("must not start with '..'")
    return errors


def volume_item_path_errors(path: str) -> list[str]:
    """`validateLocalNonReservedPath` for a ConfigMap volume item's path: relative, no '..'
    element, and not starting with '..' (the kubelet keeps its `..data` links there).

    Example:
        >>> volume_item_path_errors("pkg/..x.py"), volume_item_path_errors("..data")
        ([], ["must not start with '..'"])
    """
    errors = []
    if path.startswith("/"):
        errors.append("must be a relative path")
    if ".." in path.split("/"):
        errors.append("must not contain '..'")
    elif path.startswith(".."):
        errors.append("must not start with '..'")
    return errors


def annotations_size(annotations: Mapping[str, str]) -> int:
    """What `ValidateAnnotationsSize` counts: the bytes of every key and value.

    Example:
        >>> annotations_size({"a": "bc", "é": ""})
        5
    """
    return sum(_size(key) + _size(value) for key, value in annotations.items())


def object_errors(obj: Mapping[str, Any]) -> list[str]:
    """Every reason these rules give to refuse `obj`: its name and namespace, the labels and
    annotations of its metadata and of every embedded template's metadata, and a ConfigMap's
    keys and size.

    Example:
        >>> object_errors({"kind": "ConfigMap", "metadata": {"name": "c", "labels": {"/a": ""}}})
        ["ConfigMap c: label key '/a': prefix part must be non-empty"]
    """
    meta = obj.get("metadata") or {}
    # Each problem reads "<kind> <name><where in the object>: <reason>"; the object's own
    # part is written only for a refused object (every compile checks every object).
    problems: list[str] = []
    if "name" in meta:
        problems += [f": name {e}" for e in _name_errors(meta["name"])]
    if "namespace" in meta:
        problems += [f": namespace {e}" for e in dns1123_label_errors(meta["namespace"])]
    found: list[_Found] = []
    _metadata(obj, "", found)
    for path, embedded in found:
        problems += _meta_errors(path, embedded)
    kind = str(obj.get("kind", "object"))
    if kind in ("ConfigMap", "Secret"):
        problems += _config_map_errors(obj)
    if not problems:
        return []
    where = f"{kind} {excerpt(str(meta.get('name', '')), 80)}"
    return [where + problem for problem in problems]


def check_objects(objects: Sequence[Mapping[str, Any]]) -> None:
    """Raise `SpecError` with the first reason the API server would refuse one of `objects`.

    Example:
        >>> check_objects([{"kind": "Job", "metadata": {"name": "Bad_Name"}}])
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: Job Bad_Name: name must be a lowercase RFC 1123 ...
    """
    for obj in objects:
        errors = object_errors(obj)
        if errors:
            raise SpecError(
                excerpt(errors[0], 400),
                rule="the Kubernetes API server validates names, labels, annotations and "
                "ConfigMaps this way (k8s.io/apimachinery validation)",
                fix="change the field of the spec that sets it",
            )


@functools.lru_cache(maxsize=4096)
def _key_errors(key: str) -> tuple[str, ...]:
    # Every compile checks the same few keys (Kueue's, gkeml's): answered once each.
    return tuple(qualified_name_errors(key))


@functools.lru_cache(maxsize=4096)
def _value_errors(value: str) -> tuple[str, ...]:
    return tuple(label_value_errors(value))


@functools.lru_cache(maxsize=4096)
def _name_errors(name: str) -> tuple[str, ...]:
    return tuple(dns1123_subdomain_errors(name))


def _meta_errors(path: str, meta: Mapping[str, Any]) -> list[str]:
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    errors: list[str] = []
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return [_not_strings(path, key)]
        if _key_errors(key) or _value_errors(value):
            quoted = excerpt(repr(key), 80)
            errors += [f"{path}: label key {quoted}: {e}" for e in _key_errors(key)]
            errors += [f"{path}: label {quoted} value {e}" for e in _value_errors(value)]
    for key, value in annotations.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return [_not_strings(path, key)]
        # ValidateAnnotations checks the lower-cased key.
        for e in _key_errors(key.lower()):
            errors.append(f"{path}: annotation key {excerpt(repr(key), 80)}: {e}")
    if annotations:
        size = annotations_size(annotations)
        if size > TOTAL_ANNOTATION_SIZE_LIMIT:
            errors.append(f"{path}: annotations total {size} bytes, "
                          f"more than {TOTAL_ANNOTATION_SIZE_LIMIT}")  # fmt: skip
    return errors


def _not_strings(path: str, key: object) -> str:
    return f"{path}: labels and annotations map strings to strings, got {excerpt(key)}"


def _config_map_errors(obj: Mapping[str, Any]) -> list[str]:
    data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
    errors = [
        f": key {excerpt(repr(key), 80)}: {e}"
        for key in [*data, *binary]
        for e in config_map_key_errors(key)
    ]
    twice = [k for k in binary if k in data]
    errors += [f": key {excerpt(repr(k), 80)} is in data and binaryData" for k in twice]
    total = sum(_size(v) for v in data.values()) + sum(_size(v) for v in binary.values())
    if total > CONFIG_MAP_MAX_SIZE:
        errors.append(f": data totals {total} bytes, more than {CONFIG_MAP_MAX_SIZE}")
    return errors


# The fields through which Kubernetes objects embed object metadata: pod templates of Jobs,
# JobSets, LeaderWorkerSets, Deployments, CronJobs and Workload pod sets, claim templates.
# Only these are walked (a pod spec's containers hold none): compiling stays cheap.
_EMBEDDING = frozenset(
    {"spec", "template", "jobTemplate", "replicatedJobs", "leaderWorkerTemplate",
     "leaderTemplate", "workerTemplate", "podSets"}
)  # fmt: skip


_Found = tuple[str, Mapping[str, Any]]  # where in the object, and the metadata there


def _metadata(obj: Mapping[str, Any], path: str, found: list[_Found]) -> None:
    """Append the object's metadata and that of every template embedded in it to `found`."""
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        found.append((path, meta))
    for key in obj:
        if key not in _EMBEDDING:
            continue
        value = obj[key]
        if isinstance(value, Mapping):
            _metadata(value, f"{path}.{key}", found)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Mapping):
                    _metadata(item, f"{path}.{key}[{i}]", found)


def _format(value: str, pattern: re.Pattern[str], limit: int, what: str) -> list[str]:
    errors = []
    if _size(value) > limit:
        errors.append(f"must be no more than {limit} characters")
    if not pattern.match(value):
        errors.append(f"must be {what}")
    return errors


def _size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
