"""kubernetes-validate's strict schemas for built-in kinds, with one validator per kind.

`kubernetes_validate.validate` parses the 1.5 MB `_definitions.json` and builds a new
validator on every call (about 11 ms); the fake server and `validate_object` validate
thousands of objects, so the validator of each (version, apiVersion, kind) is built once.
The schema files and the errors raised are kubernetes-validate's own.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import jsonschema
import kubernetes_validate
from kubernetes_validate.utils import (
    SchemaNotFoundError,
    VersionNotSupportedError,
    all_versions,
    latest_version,
    major_minor,
    schema_contents,
)
from referencing import Registry, Resource


def validate_strict(obj: dict[str, Any], desired_version: str) -> None:
    """Raise `kubernetes_validate.ValidationError` (or `SchemaNotFoundError` for a kind it has
    no schema of) exactly as `kubernetes_validate.validate(obj, desired_version, strict=True)`."""
    version = _schema_version(desired_version.removeprefix("v"))
    validator = _validator(version, obj["apiVersion"], obj["kind"])
    try:
        validator.validate(obj)
    except jsonschema.ValidationError as err:
        raise kubernetes_validate.ValidationError(err, version=major_minor(version)) from None


@functools.cache
def _schema_version(desired: str) -> str:
    if major_minor(desired) > latest_version():
        raise VersionNotSupportedError(version=major_minor(desired))
    return [v for v in all_versions() if major_minor(v) <= major_minor(desired)][-1]


@functools.cache
def _validator(version: str, api_version: str, kind: str) -> jsonschema.Validator:
    # rbac.authorization.k8s.io/v1 -> rbac-v1, as kubernetes-validate names its files.
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema_dir = f"kubernetes-json-schema/v{version}-local-strict"
    try:
        schema = schema_contents(f"{schema_dir}/{kind.lower()}-{group_version}.json", version)
    except FileNotFoundError:
        raise SchemaNotFoundError(
            version=major_minor(version), kind=kind, api_version=api_version
        ) from None
    definitions = _definitions(schema_dir, version)
    registry: Registry[Any] = definitions @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


@functools.cache
def _definitions(schema_dir: str, version: str) -> Resource[Any]:
    return Resource.from_contents(schema_contents(f"{schema_dir}/_definitions.json", version))
