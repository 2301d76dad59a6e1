"""Kubernetes naming rules every spec checks: object names, label keys and values, env names."""

from __future__ import annotations

import re
from collections.abc import Mapping

from gkeml_sdk.spec.base import DNS1123_SUBDOMAIN, LABEL_VALUE, QUALIFIED_NAME, fail

ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


def check_name(field: str, value: str | None, pattern: re.Pattern[str], limit: int) -> None:
    """Raise `SpecError` with a corrected suggestion when `value` breaks `pattern` or `limit`.

    Example:
        >>> from gkeml_sdk.spec.base import DNS1123_LABEL
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
    """Label keys and values, and annotation keys, as the API server checks them.

    Example:
        >>> check_labels({"team": "vision", "example.com/owner": "alice"})
    """
    for where, mapping in (("labels", labels), ("annotations", annotations)):
        for key, value in mapping.items():
            if not _is_qualified_key(key):
                raise fail(
                    f"{where} key {key!r} is not a valid Kubernetes key",
                    rule="keys are [prefix/]name, name <= 63 alphanumerics, '-', '_', '.'",
                    fix="e.g. team: vision or example.com/owner: alice",
                    field=where,
                )
            if where == "labels" and (len(value) > 63 or not LABEL_VALUE.match(value)):
                raise fail(
                    f"label value {value!r} for {key!r} is invalid",
                    rule="label values are <= 63 alphanumerics, '-', '_', '.'",
                    fix="shorten it or move it to annotations",
                    field="labels",
                )


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


def _is_qualified_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(QUALIFIED_NAME.match(name))
