"""Validates compiled objects the way the API server would: custom kinds against the CRD
schemas in ../shared/crds (read at test time, never copied), built-in kinds with
kubernetes-validate. Unknown fields are rejected, as kubectl's strict field validation does."""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gke_crds import GKE_CRDS
from tests.shared_dir import SHARED

CRD_DIR = SHARED / "crds"
# What a real kube-apiserver + Kueue + JobSet did, event by event (README there).
RECORDINGS = Path(os.environ.get("GKEML_KUEUE_FIXTURES", SHARED / "fixtures" / "kueue-real"))
KUBERNETES_VERSION = "1.35.0"
BUILTIN_GROUPS = {
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "events.k8s.io",
    "resource.k8s.io",  # DRA claim templates: kubernetes-validate knows resource.k8s.io/v1
}


# Tests that read the real controllers' recordings skip, saying where they looked, without them.
needs_recordings = pytest.mark.skipif(
    not RECORDINGS.is_dir(),
    reason=f"Kueue/JobSet recordings not found at {RECORDINGS} (the shared folder: set "
    "GKEML_SHARED, or GKEML_KUEUE_FIXTURES for the recordings alone)",
)


def crd_dir_or_skip() -> Path:
    """The shared CRD folder, or a pytest skip saying why schema checks cannot run."""
    if not CRD_DIR.is_dir():
        pytest.skip(
            f"CRD schemas not found at {CRD_DIR}: schema validation needs $GKEML_SHARED/crds"
        )
    return CRD_DIR


@functools.cache
def _crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    schemas: dict[tuple[str, str], dict[str, Any]] = {}
    shared = (doc for path in sorted(CRD_DIR.rglob("*.yaml")) for doc in _docs(path))
    for doc in [*shared, *GKE_CRDS]:
        if not doc or doc.get("kind") != "CustomResourceDefinition":
            continue
        group = doc["spec"]["group"]
        kind = doc["spec"]["names"]["kind"]
        for version in doc["spec"]["versions"]:
            schema = version.get("schema", {}).get("openAPIV3Schema")
            if schema:
                schemas[(f"{group}/{version['name']}", kind)] = _with_object_meta(_strict(schema))
    return schemas


def _docs(path: Path) -> list[Any]:
    # libyaml: the CRDs are 7 MB of YAML, 17 s of CPU through the pure-Python reader.
    return list(
        yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    )


def _with_object_meta(schema: dict[str, Any]) -> dict[str, Any]:
    # The API server accepts apiVersion, kind and metadata on every object; some CRDs (Istio's)
    # leave them out of their schema, which the strict root would then reject.
    properties = schema.setdefault("properties", {})
    properties.setdefault("apiVersion", {"type": "string"})
    properties.setdefault("kind", {"type": "string"})
    properties.setdefault("metadata", {"type": "object"})
    return schema


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if (
                "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            node.pop("x-kubernetes-validations", None)  # CEL rules: not evaluated here
            if isinstance(node.get("pattern"), str):
                from tests.kubeapi.schema import go_pattern

                node["pattern"] = go_pattern(node["pattern"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    # The API server accepts these on every object, whatever the CRD's schema lists.
    root = schema.setdefault("properties", {})
    root.setdefault("apiVersion", {"type": "string"})
    root.setdefault("kind", {"type": "string"})
    root.setdefault("metadata", {"type": "object"})
    return schema


def is_builtin(obj: dict[str, Any]) -> bool:
    """True for kinds that kubernetes-validate knows (core and built-in API groups)."""
    group = obj["apiVersion"].rpartition("/")[0] if "/" in obj["apiVersion"] else ""
    return group in BUILTIN_GROUPS


def validate_object(obj: dict[str, Any]) -> None:
    """Raise AssertionError with the reason when `obj` would be rejected by the API server:
    its schema, then the JobSet, LeaderWorkerSet and Kueue admission webhooks."""
    _validate_schema(obj)
    if obj["kind"] == "JobSet":
        _validate_child_jobs(obj)
    if (obj["apiVersion"], obj["kind"]) == ("batch/v1", "Job"):
        _job_rules(obj["metadata"].get("name"), obj["spec"])
    from tests.kubeapi.admission import admission_errors

    denied = admission_errors(obj)
    if denied:
        raise AssertionError(
            f"{obj['kind']} {obj['metadata'].get('name')}: refused at admission: {denied[0]}"
        )


def _validate_child_jobs(jobset: dict[str, Any]) -> None:
    """The JobSet controller creates a batch/v1 Job per replica from each template, which
    kube-apiserver validates then: a template it refuses would fail only after admission."""
    for replicated in jobset["spec"].get("replicatedJobs") or []:
        name = f"{jobset['metadata'].get('name')}-{replicated['name']}-0"
        child = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name},
            "spec": replicated["template"]["spec"],
        }
        _validate_schema(child)
        _job_rules(name, child["spec"])


def _job_rules(name: str, spec: dict[str, Any]) -> None:
    from tests.kubeapi.validation import job_spec_causes

    causes = job_spec_causes(spec)
    if causes:
        raise AssertionError(f"Job {name}: {causes[0]['field']}: {causes[0]['message']}")


def _validate_schema(obj: dict[str, Any]) -> None:
    if is_builtin(obj):
        import kubernetes_validate

        from tests.kubeapi.builtin_schemas import validate_strict

        try:
            validate_strict(obj, KUBERNETES_VERSION)
        except kubernetes_validate.ValidationError as exc:
            where = "/".join(str(p) for p in getattr(exc, "path", []))
            message = getattr(exc, "message", str(exc).splitlines()[0])
            raise AssertionError(
                f"{obj['kind']} {obj['metadata'].get('name')}: {where}: {message}"
            ) from None
        return
    if (obj["apiVersion"], obj["kind"]) == ("resource.nvidia.com/v1beta1", "ComputeDomain"):
        _validate_compute_domain(obj)
        return
    crd_dir_or_skip()
    schema = _crd_schemas().get((obj["apiVersion"], obj["kind"]))
    if schema is None:
        raise AssertionError(f"no CRD schema for {obj['apiVersion']} {obj['kind']} in {CRD_DIR}")
    import jsonschema

    errors = sorted(
        jsonschema.Draft7Validator(schema).iter_errors(obj), key=lambda e: list(e.absolute_path)
    )
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path)
        raise AssertionError(
            f"{obj['kind']} {obj['metadata'].get('name')}: {where}: {errors[0].message}"
        )


def _validate_compute_domain(obj: dict[str, Any]) -> None:
    # No ComputeDomain CRD in ../shared/crds: the fields NVIDIA's CRD
    # (kubernetes-sigs/dra-driver-nvidia-gpu, computedomains.resource.nvidia.com v1beta1)
    # requires or allows in spec, checked by hand.
    spec = obj.get("spec", {})
    name = obj["metadata"].get("name")
    assert set(spec) <= {"numNodes", "channel"}, f"ComputeDomain {name}: unknown spec fields"
    assert isinstance(spec.get("numNodes"), int) and spec["numNodes"] >= 0, (
        f"ComputeDomain {name}: spec.numNodes is a required integer >= 0"
    )
    channel = spec.get("channel", {})
    assert set(channel) <= {"resourceClaimTemplate", "allocationMode"}
    assert channel.get("allocationMode", "Single") in ("Single", "All")
    template = channel.get("resourceClaimTemplate", {})
    assert set(template) == {"name"} and isinstance(template["name"], str), (
        f"ComputeDomain {name}: spec.channel.resourceClaimTemplate.name is required"
    )
