"""`Route` and `Routing`: how requests reach model servers by model name, through the GKE
Inference Gateway or Istio, with weights across models or model versions.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from gkeml_sdk.core.model import DNS1123_LABEL, DNS1123_SUBDOMAIN, SpecModel, fail
from gkeml_sdk.serving.istio_hosts import virtual_service_host_errors

MAX_WEIGHT = 1_000_000  # HTTPRoute backendRef weight limit
MAX_RETRIES = 5
Via = Literal["inference-gateway", "istio"]


class Route(SpecModel):
    """Requests for one model name, split over services (ServeModel names in the same
    namespace) by relative weight.

    Example:
        >>> Route(model="llama-70b", backends={"chat": 90, "chat-v2": 10}).share("chat-v2")
        0.1
    """

    model: str = Field(description="The model name clients request.")
    backends: dict[str, int] = Field(description="ServeModel name -> traffic weight.")

    @model_validator(mode="after")
    def _check(self) -> Route:
        if not self.model.strip():
            raise fail("Route.model is empty", fix="the model name clients send", field="model")
        if not self.backends:
            raise fail(
                f"route for {self.model!r} has no backends",
                fix="backends={'SERVICE': 100}",
                field="backends",
            )
        for name, weight in self.backends.items():
            if len(name) > 63 or not DNS1123_LABEL.match(name):
                raise fail(
                    f"backend {name!r} is not a service name",
                    rule="backends are ServeModel names (DNS labels) in this namespace",
                    fix="e.g. backends={'chat': 100}",
                    field="backends",
                )
            if not 0 <= weight <= MAX_WEIGHT:
                raise fail(
                    f"weight {weight} for backend {name!r}",
                    rule=f"weights are relative integers from 0 to {MAX_WEIGHT}",
                    fix="e.g. 90 and 10",
                    field="backends",
                )
        if sum(self.backends.values()) == 0:
            raise fail(
                f"every backend of {self.model!r} has weight 0",
                rule="a route sends traffic to at least one backend",
                fix="give one backend a positive weight",
                field="backends",
            )
        return self

    def share(self, backend: str) -> float:
        """Fraction of this model's requests that `backend` receives."""
        return self.backends.get(backend, 0) / sum(self.backends.values())


class Routing(SpecModel):
    """Model-aware routing in front of a ServeModel: InferencePool + HTTPRoute for the GKE
    Inference Gateway (gateway-api-inference-extension.sigs.k8s.io), or VirtualService +
    DestinationRule for Istio (istio.io).

    With no `routes`, requests for the service's own model name go to the service. With
    `backend_only=True` only the routing target is written (InferencePool or
    DestinationRule) so that another service's routes can send traffic here.

    Example:
        >>> r = Routing(via="istio", routes=[Route(model="llama", backends={"a": 1, "b": 1})])
        >>> r.via, r.attempts
        ('istio', 1)
    """

    via: Via = Field(
        description='How traffic arrives: "istio" (the mesh) or "inference-gateway" (GKE\'s).'
    )
    routes: list[Route] = Field(
        default_factory=list, description="Model name routes with weighted backends: `Route(...)`."
    )
    backend_only: bool = Field(
        False, description="Compile only the backend objects; another service owns the routes."
    )
    gateway: str | None = Field(
        None, description="[namespace/]name of the Gateway (Istio: besides the mesh)."
    )
    hosts: list[str] = Field(
        default_factory=list,
        description="Hosts the routes bind; empty: the Service's DNS name (Istio).",
    )
    match_model_header: bool = Field(True, description="Route by the request's model name header.")
    timeout_seconds: int = Field(
        600,
        description="Request timeout; streaming generations need minutes, not the load "
        "balancer's 30 s.",
    )
    retries: int | None = Field(
        None, description="Retries of connection failures and 503s (Istio only); None means 1."
    )
    endpoint_picker: str | None = Field(
        None, description="Inference Gateway's endpoint picker Service; None: `<name>-epp`."
    )
    failure_mode: Literal["FailOpen", "FailClose"] | None = Field(
        None, description="What the gateway does when the endpoint picker is down."
    )

    @model_validator(mode="after")
    def _check(self) -> Routing:
        if self.backend_only and self.routes:
            raise fail(
                "backend_only=True with routes",
                rule="a backend-only service receives traffic from another service's routes",
                fix="drop routes, or backend_only=False",
                field="routes",
            )
        models = [r.model for r in self.routes]
        if len(set(models)) != len(models):
            raise fail(
                f"routes repeat a model name: {models}",
                rule="each model name has one route; split it with weights inside the route",
                fix="Route(model=..., backends={'v1': 90, 'v2': 10})",
                field="routes",
            )
        if self.timeout_seconds < 1:
            raise fail(f"timeout_seconds={self.timeout_seconds}", fix="timeout_seconds=600")
        if self.gateway is not None and not all(
            DNS1123_SUBDOMAIN.match(part) for part in self.gateway.split("/", 1)
        ):
            raise fail(
                f"gateway={self.gateway!r}",
                rule="a Gateway is named [namespace/]name",
                fix="gateway='serving/inference-gateway'",
                field="gateway",
            )
        self._check_per_implementation()
        return self

    def _check_per_implementation(self) -> None:
        if self.via == "istio":
            if self.endpoint_picker is not None or self.failure_mode is not None:
                raise fail(
                    "endpoint_picker/failure_mode apply to via='inference-gateway'",
                    rule="Istio routes to the Service; the endpoint picker belongs to an "
                    "InferencePool",
                    fix="drop them, or via='inference-gateway'",
                )
            refused = virtual_service_host_errors(self.hosts)
            if refused:
                raise fail(
                    f"hosts: {refused[0]}",
                    rule="istiod refuses a VirtualService whose hosts are not DNS names (a '*' "
                    "only as the first label), IP addresses, or that repeat a host",
                    fix="hosts=['chat.example.com'], or leave hosts empty for the Service's name",
                    field="hosts",
                )
            if self.retries is not None and not 0 <= self.retries <= MAX_RETRIES:
                raise fail(
                    f"retries={self.retries}",
                    rule="LLM requests are expensive: retry only connection failures, a few times",
                    fix="retries=1",
                    field="retries",
                )
            return
        if self.retries is not None or self.hosts:
            raise fail(
                "retries/hosts apply to via='istio'",
                rule="HTTPRoute retries are experimental; the Inference Gateway routes by "
                "Gateway listener, not host list",
                fix="drop them, or via='istio'",
            )
        if self.endpoint_picker is not None and not DNS1123_LABEL.match(self.endpoint_picker):
            raise fail(
                f"endpoint_picker={self.endpoint_picker!r} is not a Service name",
                fix="endpoint_picker='chat-epp'",
                field="endpoint_picker",
            )

    @property
    def attempts(self) -> int:
        """Istio retry attempts after the first try."""
        return 1 if self.retries is None else self.retries
