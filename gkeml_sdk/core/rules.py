"""Kubernetes naming rules every spec checks: object names, label keys and values, env names."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping

from gkeml_sdk.core.apimachinery import (
    TOTAL_ANNOTATION_SIZE_LIMIT,
    annotations_size,
    label_value_errors,
    qualified_name_errors,
)
from gkeml_sdk.core.credentials import check_texts, credential_reason
from gkeml_sdk.core.environment import ATTEMPT_NAME_ALLOWANCE, REPLICATED_JOB
from gkeml_sdk.core.model import DNS1035_LABEL, fail
from gkeml_sdk.errors import excerpt

ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*\Z")
# Env names that say they hold one (split on '_': TOKENIZERS_PARALLELISM is no token).
_SECRET_WORDS = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS"}
_SECRET_PAIRS = {("API", "KEY"), ("ACCESS", "KEY"), ("PRIVATE", "KEY"), ("SECRET", "KEY")}
INT32_MAX = 2**31 - 1  # replicas, parallelism, maxRestarts, Kueue's max execution time
# The Job controller's random pod suffix plus the dashes around the indexes (JobSet webhook).
_POD_NAME_OVERHEAD = 9


def run_name_limit(replicas: int, completions: int) -> int:
    """Longest run name whose JobSet, child Job and pod names pass the JobSet webhook
    (`pkg/webhooks/jobset_webhook.go` in kubernetes-sigs/jobset) for every attempt:
    `N-R-J` <= 63 and `len(N) + len(R) + len(J) + len(P) + 9 <= 63`, N the attempt's name.

    Example:
        >>> run_name_limit(replicas=1, completions=2), run_name_limit(1, 100_000)
        (43, 39)
    """
    rjob, j, p = len(REPLICATED_JOB), len(str(replicas - 1)), len(str(completions - 1))
    jobset = min(63 - rjob - j - 2, 63 - rjob - j - p - _POD_NAME_OVERHEAD)
    return jobset - ATTEMPT_NAME_ALLOWANCE


def check_run_name(value: str, limit: int) -> None:
    """A training run's name: a DNS-1035 label (JobSet and its headless Service are named
    after it) of at most `limit` characters.

    Example:
        >>> check_run_name("1train", 40)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: name='1train' is not a valid ... Try: name='train'
    """
    if len(value) <= limit and DNS1035_LABEL.match(value):
        return
    suggestion = re.sub(r"[^a-z0-9-]+", "-", value.lower()).lstrip("0123456789-")
    suggestion = suggestion[:limit].rstrip("-") or "job"
    raise fail(
        f"name={value!r} is not a valid Kubernetes name for a run",
        rule="JobSet and Service names are DNS-1035 labels: a lower-case letter first, then "
        "letters, digits and '-', ending alphanumeric; at most "
        f"{limit} characters here so every attempt's Job and pod names stay within 63",
        fix=f"name={suggestion!r}",
        field="name",
    )


def check_int32(field: str, value: int | None, api: str = "Kubernetes") -> None:
    """Refuse a count the Kubernetes field (int32) cannot hold.

    Example:
        >>> check_int32("nodes", 2**31)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: nodes=2147483648 is too large ... Try: nodes<=2147483647
    """
    if value is not None and value > INT32_MAX:
        raise fail(
            f"{field}={value} is too large",
            rule=f"{api} stores it as a 32-bit integer",
            fix=f"{field}<={INT32_MAX}",
            field=field,
        )


def check_number(
    field: str,
    value: object,
    *,
    low: float = 0,
    above: bool = False,
    high: float | None = None,
    integer: bool = False,
    optional: bool = False,
) -> None:
    """Refuse a setting that is no finite number of at least `low` (more than `low` when
    `above`) and at most `high`, or no integer when `integer`; None passes when `optional`.

    Example:
        >>> check_number("grace_seconds", 5)
        >>> check_number("attempts", 0, low=1, integer=True)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: attempts=0 (rule: a whole number of at least 1). Try: ...
    """
    if value is None and optional:
        return
    kind = "a whole number" if integer else "a finite number"
    bound = f"more than {low:g}" if above else f"of at least {low:g}"
    if high is not None:
        bound += f" and at most {high:g}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        good = False
    elif isinstance(value, float):
        good = not integer and math.isfinite(value)
    else:
        good = True  # ints of any size compare exactly
    if (
        not good
        or (value <= low if above else value < low)  # type: ignore[operator]
        or (high is not None and value > high)  # type: ignore[operator]
    ):
        raise fail(
            f"{field}={excerpt(value, 40)}",
            rule=f"{kind} {bound}",
            fix=f"{field}={low + 1 if above else low:g}",
            field=field,
        )


def check_name(field: str, value: str | None, pattern: re.Pattern[str], limit: int) -> None:
    """Raise `SpecError` with a corrected suggestion when `value` breaks `pattern` or `limit`.

    Example:
        >>> from gkeml_sdk.core.model import DNS1123_LABEL
        >>> check_name("name", "Llama_FT", DNS1123_LABEL, 40)
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: name='Llama_FT' is not a valid ... Try: name='llama-ft'
    """
    if value is None or (len(value) <= limit and pattern.match(value)):
        return
    suggestion = re.sub(r"[^a-z0-9.-]+", "-", value.lower()).strip("-.")[:limit] or "my-job"
    raise fail(
        f"{field}={value!r} is not a valid Kubernetes name",
        rule="lower-case letters, digits and '-', starting and ending alphanumeric, "
        f"at most {limit} characters",
        fix=f"{field}={suggestion!r}",
        field=field,
    )


def check_labels(labels: Mapping[str, str], annotations: Mapping[str, str] = {}) -> None:
    """Label keys and values, annotation keys and their total size, as the API server checks
    them (`core.apimachinery`).

    Example:
        >>> check_labels({"team": "vision", "example.com/owner": "alice"})
        >>> check_labels({"/team": "vision"})
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: labels key '/team' is not a valid Kubernetes key: ...
    """
    for where, mapping in (("labels", labels), ("annotations", annotations)):
        for key, value in mapping.items():
            # ValidateAnnotations checks annotation keys lower-cased, labels as written.
            problems = qualified_name_errors(key if where == "labels" else key.lower())
            if problems:
                raise fail(
                    f"{where} key {excerpt(repr(key), 80)} is not a valid Kubernetes key: "
                    + "; ".join(problems),
                    rule="keys are [prefix/]name: an optional DNS subdomain prefix of at most "
                    "253 characters, then a name of at most 63 alphanumerics, '-', '_', '.'",
                    fix="e.g. team: vision or example.com/owner: alice",
                    field=where,
                )
            if where == "labels" and label_value_errors(value):
                raise fail(
                    f"label value {excerpt(repr(value), 80)} for {excerpt(repr(key), 80)} is "
                    "invalid",
                    rule="label values are <= 63 alphanumerics, '-', '_', '.'",
                    fix="shorten it or move it to annotations",
                    field="labels",
                )
    size = annotations_size(annotations)
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        raise fail(
            f"annotations total {size} bytes",
            rule=f"the API server stores at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes of "
            "annotation keys and values per object",
            fix="keep large values in a ConfigMap or a bucket and annotate a reference",
            field="annotations",
        )
    # A value the cluster stores and shows to everyone who lists the object.
    check_texts(labels.items(), "labels")
    check_texts(annotations.items(), "annotations")


def check_env_name(key: str) -> None:
    """Raise `SpecError` for a name a container's env cannot hold.

    Example:
        >>> check_env_name("MY_SETTING")
    """
    if not ENV_NAME.match(key):
        raise fail(
            f"env name {key!r} is invalid",
            rule="environment variable names are letters, digits, '_', '-', '.'",
            fix="e.g. MY_SETTING",
            field="env",
        )


def check_plain_env(env: Mapping[str, str], secret_field: str = "secret_env") -> None:
    """Refuse a plain env value that looks like a credential: it would be stored in the
    object (and the run record, the notebook's YAML, `kubectl get -o yaml`) in clear text.

    Example:
        >>> check_plain_env({"LOG_LEVEL": "debug", "TOKENIZERS_PARALLELISM": "false"})
        >>> check_plain_env({"HF_TOKEN": "hf_" + "a" * 34})
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: env HF_TOKEN holds what looks like a credential ...
    """
    for name, value in env.items():
        if _looks_secret(name, value):
            raise fail(
                f"env {name} holds what looks like a credential ({_masked(value)})",
                rule="plain env values are written into the object and every copy of it in "
                "clear text; credentials come from a Kubernetes Secret",
                fix=f"{secret_field}={{{name!r}: 'SECRET/KEY'}} after `kubectl create secret "
                f"generic SECRET --from-literal=KEY=...` (locally the value is read from "
                f"${name} of the submitting process)",
                field="env",
            )


def slug(text: str, *, empty: str) -> str:
    """A DNS label made of `text` (for rule and object names), or `empty` when nothing is left.

    Example:
        >>> slug("meta-llama/Llama-3.1-8B", empty="model"), slug("My_Bucket.v2", empty="data")
        ('meta-llama-llama-3-1-8b', 'my-bucket-v2')
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:63].rstrip("-") or empty


def _looks_secret(name: str, value: str) -> bool:
    if credential_reason(value, name) is not None:  # a token's shape, or named and random
        return True
    words = name.upper().split("_")
    named = bool(_SECRET_WORDS & set(words)) or any(
        pair in _SECRET_PAIRS for pair in itertools.pairwise(words)
    )
    # A named secret with a value that is no flag, number, path, URL or $(REFERENCE).
    return (
        named
        and len(value) >= 12
        and not re.search(r"[\s/$]", value)
        and value.lower() not in ("true", "false")
        and not value.replace(".", "").isdigit()
    )


def _masked(value: str) -> str:
    return f"{value[:4]}… {len(value)} characters" if len(value) > 8 else "a short value"
