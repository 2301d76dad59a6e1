"""Go `field.Error`s as admission webhooks and CEL report them, and the Status they become."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..resources import ResourceType

OMIT: Any = object()  # field.OmitValueType: "Invalid value: <detail>" without a value
_REASON = {
    "Invalid": "FieldValueInvalid",
    "Required": "FieldValueRequired",
    "Forbidden": "FieldValueForbidden",
    "NotSupported": "FieldValueNotSupported",
    "Duplicate": "FieldValueDuplicate",
    "Internal": "InternalError",
}
DNS1035_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN_RE = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def dns1035(value: str) -> list[str]:
    """apimachinery IsDNS1035Label: the messages for `value` (empty when valid)."""
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not DNS1035_RE.match(value):
        out.append(DNS1035_MSG)
    return out


def dns1123_subdomain(value: str) -> list[str]:
    out = []
    if len(value) > 253:
        out.append("must be no more than 253 characters")
    if not DNS1123_SUBDOMAIN_RE.match(value):
        out.append(DNS1123_SUBDOMAIN_MSG)
    return out


def go_value(value: Any) -> str:
    """A bad value printed as field.Error does: quoted strings, bare numbers, JSON otherwise."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True)
class FieldError:
    kind: str  # Invalid | Required | Forbidden | NotSupported | Internal (plain-string error)
    path: str
    detail: str
    value: Any = OMIT

    def message(self) -> str:
        if self.kind == "Internal":
            return f"Internal error: {self.detail}"
        if self.kind == "Required":
            return f"Required value: {self.detail}" if self.detail else "Required value"
        if self.kind == "Forbidden":
            return f"Forbidden: {self.detail}"
        if self.kind == "Duplicate":
            return f"Duplicate value: {go_value(self.value)}"
        if self.kind == "NotSupported":
            return f"Unsupported value: {go_value(self.value)}: {self.detail}"
        if self.value is OMIT:
            return f"Invalid value: {self.detail}"
        return f"Invalid value: {go_value(self.value)}: {self.detail}"

    def cause(self) -> dict[str, str]:
        field = "<nil>" if self.kind == "Internal" else self.path
        return {"reason": _REASON[self.kind], "message": self.message(), "field": field}

    def text(self) -> str:
        cause = self.cause()
        return f"{cause['field']}: {cause['message']}"


def internal(detail: str) -> FieldError:
    """A plain Go `error` (fmt.Errorf) that the webhook framework reports without a field."""
    return FieldError("Internal", "<nil>", detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("Invalid", path, detail, value)


def aggregate(errs: list[FieldError]) -> str:
    """utilerrors.Aggregate: identical messages once, several as `[a, b]`."""
    texts = list(dict.fromkeys(e.text() for e in errs))
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def invalid_status(rt: ResourceType, name: str, errs: list[FieldError]) -> errors.ApiError:
    """422 Invalid as the apiserver itself (schema, CEL) reports it."""
    return errors.invalid(rt, name, [e.cause() for e in errs])


def webhook_invalid(
    webhook: str, rt: ResourceType, name: str, errs: list[FieldError]
) -> errors.ApiError:
    """A webhook that answers an Invalid StatusError (JobSet's): 422 with causes."""
    err = invalid_status(rt, name, errs)
    err.message = f'admission webhook "{webhook}" denied the request: {err.message}'
    return err


def webhook_denied(webhook: str, errs: list[FieldError]) -> errors.ApiError:
    """A webhook that answers a plain denial (LWS's, Kueue's): 403 Forbidden, no details."""
    msg = f'admission webhook "{webhook}" denied the request: {aggregate(errs)}'
    return errors.ApiError(403, "Forbidden", msg)
