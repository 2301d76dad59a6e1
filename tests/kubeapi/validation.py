"""Write-time validation: ObjectMeta, CRD openAPIV3Schema, built-ins via kubernetes-validate."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import kubernetes_validate

from . import errors
from .builtin_schemas import validate_strict
from .resources import ResourceType
from .schema import prune_and_default, validator_for
from .selectors import LABEL_KEY_RE, LABEL_VALUE_RE

DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_NAMED = {"namespaces", "services"}
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
MAX_ERRORS = 20


def latest_k8s_version() -> str:
    return str(kubernetes_validate.latest_version())


def _q(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def field_path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024  # apimachinery's TotalAnnotationSizeLimitB


def metadata_causes(rt: ResourceType, obj: dict[str, Any]) -> list[dict[str, str]]:
    meta = obj.get("metadata") or {}
    causes: list[dict[str, str]] = []
    name = meta.get("name") or ""
    if rt.plural in _LABEL_NAMED:
        ok, limit, msg = bool(DNS_LABEL_RE.match(name)), 63, _LABEL_MSG
    else:
        ok, limit, msg = bool(DNS_SUBDOMAIN_RE.match(name)), 253, _SUBDOMAIN_MSG
    if not ok:
        causes.append(
            _cause("FieldValueInvalid", "metadata.name", f"Invalid value: {_q(name)}: {msg}")
        )
    elif len(name) > limit:
        causes.append(
            _cause(
                "FieldValueInvalid",
                "metadata.name",
                f"Invalid value: {_q(name)}: must be no more than {limit} characters",
            )
        )
    for key, value in (meta.get("labels") or {}).items():
        if not LABEL_KEY_RE.match(key) or len(key.split("/")[-1]) > 63:
            causes.append(
                _cause(
                    "FieldValueInvalid",
                    "metadata.labels",
                    f"Invalid value: {_q(key)}: name part must be a valid label key",
                )
            )
        if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE_RE.match(value):
            causes.append(
                _cause(
                    "FieldValueInvalid",
                    f"metadata.labels.{key}",
                    f"Invalid value: {_q(value)}: a valid label must be an empty "
                    "string or consist of alphanumeric characters, '-', '_' or '.'",
                )
            )
    annotations = meta.get("annotations") or {}
    for key in annotations:
        if not LABEL_KEY_RE.match(key):
            causes.append(
                _cause(
                    "FieldValueInvalid",
                    "metadata.annotations",
                    f"Invalid value: {_q(key)}: name part must be a valid key",
                )
            )
    # apimachinery ValidateAnnotations: keys and values together, in bytes.
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        causes.append(
            _cause(
                "FieldValueTooLong",
                "metadata.annotations",
                f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT_B} bytes",
            )
        )
    return causes


def _cause(reason: str, field: str, message: str) -> dict[str, str]:
    return {"reason": reason, "message": message, "field": field}


def _schema_cause(err: jsonschema.ValidationError) -> dict[str, str]:
    path = field_path(err.absolute_path)
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else "?"
        return _cause(
            "FieldValueRequired", f"{path}.{missing}" if path else missing, "Required value"
        )
    if err.validator == "type":
        want = err.validator_value
        msg = f"Invalid value: {_q(err.instance)}: {path} in body must be of type {want}: " + _q(
            type(err.instance).__name__ if not isinstance(err.instance, str) else "string"
        )
        return _cause("FieldValueTypeInvalid", path, msg)
    if err.validator == "enum":
        allowed = ", ".join(_q(v) for v in err.validator_value)
        return _cause(
            "FieldValueNotSupported",
            path,
            f"Unsupported value: {_q(err.instance)}: supported values: {allowed}",
        )
    return _cause("FieldValueInvalid", path, f"Invalid value: {_q(err.instance)}: {err.message}")


def _unknown_error(rt: ResourceType, version: str, unknown: list[str]) -> errors.ApiError:
    fields = ", ".join(f'unknown field "{u}"' for u in unknown)
    return errors.bad_request(
        f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: '
        f"strict decoding error: {fields}"
    )


def validate_custom(
    rt: ResourceType, version: str, obj: dict[str, Any], field_validation: str
) -> tuple[list[dict[str, str]], list[str]]:
    """Prune+default `obj` in place; return (causes, warnings). Strict unknowns raise 400."""
    schema = rt.schemas.get(version) or {}
    if not schema:
        return [], []
    unknown: list[str] = []
    prune_and_default(obj, schema, "", unknown, root=True)
    if unknown and field_validation == "Strict":
        raise _unknown_error(rt, version, unknown)
    validator = validator_for(rt.crd_name, version, schema)
    errs = sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))
    causes = [_schema_cause(e) for e in errs[:MAX_ERRORS]]
    warnings = [] if field_validation == "Ignore" else [f'unknown field "{u}"' for u in unknown]
    return causes, warnings


def _drop_unknown(obj: dict[str, Any], err: jsonschema.ValidationError) -> list[str]:
    cur: Any = obj
    for p in err.absolute_path:
        cur = cur[p]
    known = set((err.schema or {}).get("properties", {}))
    extra = [k for k in list(cur) if k not in known] if isinstance(cur, dict) else []
    base = field_path(err.absolute_path)
    for k in extra:
        del cur[k]
    return [f"{base}.{k}" if base else k for k in extra]


def validate_builtin(
    rt: ResourceType, obj: dict[str, Any], k8s_version: str, field_validation: str
) -> tuple[list[dict[str, str]], list[str]]:
    """kubernetes-validate (strict schema) with unknown fields pruned, plus a few server rules."""
    unknown: list[str] = []
    causes: list[dict[str, str]] = []
    for _ in range(50):
        try:
            validate_strict(obj, k8s_version)
        except kubernetes_validate.ValidationError as err:
            if err.validator == "additionalProperties":
                unknown.extend(_drop_unknown(obj, err))
                continue
            causes.append(_schema_cause(err))
        except (kubernetes_validate.utils.SchemaNotFoundError, KeyError):
            pass
        break
    if unknown and field_validation == "Strict":
        raise _unknown_error(rt, rt.versions[0], unknown)
    causes.extend(_semantic_causes(rt, obj))
    warnings = [] if field_validation == "Ignore" else [f'unknown field "{u}"' for u in unknown]
    return causes, warnings


def _pod_spec_causes(spec: Any, path: str) -> list[dict[str, str]]:
    if not isinstance(spec, dict):
        return []
    causes = []
    if not spec.get("containers"):
        causes.append(_cause("FieldValueRequired", f"{path}.containers", "Required value"))
    names = [c.get("name") for c in spec.get("containers") or [] if isinstance(c, dict)]
    for i, n in enumerate(names):
        if n in names[:i]:
            causes.append(
                _cause(
                    "FieldValueDuplicate",
                    f"{path}.containers[{i}].name",
                    f"Duplicate value: {_q(n)}",
                )
            )
    return causes


def job_spec_causes(spec: dict[str, Any], prefix: str = "spec") -> list[dict[str, str]]:
    """kube-apiserver's rules of a Job's spec that its schema does not hold (batch
    validation.go): a restart policy, and a podFailurePolicy only with restartPolicy Never
    and naming only containers of the template. JobSet's child Jobs meet them too."""
    tpl_spec = ((spec.get("template") or {}).get("spec")) or {}
    causes = _pod_spec_causes(tpl_spec, f"{prefix}.template.spec")
    policy = tpl_spec.get("restartPolicy")
    if policy is None:
        causes.append(
            _cause(
                "FieldValueRequired",
                f"{prefix}.template.spec.restartPolicy",
                'Required value: valid values: "OnFailure", "Never"',
            )
        )
    elif policy not in ("OnFailure", "Never"):
        causes.append(
            _cause(
                "FieldValueNotSupported",
                f"{prefix}.template.spec.restartPolicy",
                f'Unsupported value: {_q(policy)}: supported values: "OnFailure", "Never"',
            )
        )
    failure_policy = spec.get("podFailurePolicy")
    if failure_policy is None:
        return causes
    if policy is not None and policy != "Never":
        causes.append(
            _cause(
                "FieldValueInvalid",
                f"{prefix}.template.spec.restartPolicy",
                f'Invalid value: {_q(policy)}: only "Never" is supported when podFailurePolicy '
                "is specified",
            )
        )
    names = {
        c.get("name")
        for key in ("containers", "initContainers")
        for c in tpl_spec.get(key) or []
        if isinstance(c, dict)
    }
    for i, rule in enumerate(failure_policy.get("rules") or []):
        name = (rule.get("onExitCodes") or {}).get("containerName")
        if name is not None and name not in names:
            causes.append(
                _cause(
                    "FieldValueInvalid",
                    f"{prefix}.podFailurePolicy.rules[{i}].onExitCodes.containerName",
                    f"Invalid value: {_q(name)}: must be one of the container or initContainer "
                    "names in the pod template",
                )
            )
    return causes


def _semantic_causes(rt: ResourceType, obj: dict[str, Any]) -> list[dict[str, str]]:
    spec = obj.get("spec") or {}
    if rt.key == "pods":
        return _pod_spec_causes(spec, "spec")
    if rt.key == "jobs.batch":
        return job_spec_causes(spec)
    if rt.key in ("deployments.apps", "podtemplates"):
        holder = obj if rt.key == "podtemplates" else spec
        tpl_spec = ((holder.get("template") or {}).get("spec")) or {}
        prefix = "template.spec" if rt.key == "podtemplates" else "spec.template.spec"
        return _pod_spec_causes(tpl_spec, prefix)
    return []
