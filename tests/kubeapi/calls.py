"""Request/response value types passed between the HTTP handler and the API semantics layer."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from . import errors
from .resources import ResourceType


@dataclass
class Call:
    rt: ResourceType
    version: str
    namespace: str  # "" for cluster-scoped resources and all-namespace lists
    name: str | None
    subresource: str  # "" or e.g. "status", "log"
    query: dict[str, str]
    body: bytes = b""
    content_type: str = "application/json"
    user_agent: str = ""
    accept: str = ""  # the request's Accept header (metadata-only reads ask through it)

    def q(self, key: str, default: str | None = None) -> str | None:
        return self.query.get(key, default)

    @property
    def media_type(self) -> str:
        return self.content_type.split(";")[0].strip().lower()

    @property
    def manager(self) -> str:
        # kube-apiserver defaults the field manager to the User-Agent prefix before "/".
        return self.q("fieldManager") or (self.user_agent.split("/")[0] or "unknown")

    @property
    def dry_run(self) -> bool:
        return self.q("dryRun") == "All"

    @property
    def field_validation(self) -> str:
        return self.q("fieldValidation") or "Warn"

    def json_body(self) -> Any:
        if not self.body.strip():
            raise errors.bad_request("request body is empty")
        try:
            if "yaml" in self.media_type:
                return yaml.safe_load(self.body.decode("utf-8"))
            return json.loads(self.body)
        except (ValueError, yaml.YAMLError) as exc:
            raise errors.bad_request(f"unable to decode request body: {exc}") from exc

    def object_body(self) -> dict[str, Any]:
        body = self.json_body()
        if not isinstance(body, dict):
            raise errors.bad_request("the request body must be a JSON object")
        return body


@dataclass
class Reply:
    code: int
    body: Any  # dict (JSON) or str (text/plain)
    headers: dict[str, str] = field(default_factory=dict)

    def warn(self, warnings: list[str]) -> Reply:
        if warnings:
            self.headers["Warning"] = ", ".join(f'299 - "{w}"' for w in warnings)
        return self
