"""Env of a model server: Secret references (`secret_env`) and the refusal of plain env that
looks like a credential, whose value would sit in the Deployment for anyone who reads it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.model import fail
from gkeml_sdk.core.secret_ref import check_secret_names, looks_secret
from gkeml_sdk.serving.engine_row import TOKEN_ENV

if TYPE_CHECKING:
    from gkeml_sdk.serving.model import ServeModel


def check_serving_env(svc: ServeModel) -> None:
    """Secret references are valid and unique; plain env that looks secret is refused unless
    `not_secret` names it.

    Example:
        >>> from gkeml_sdk import Accelerator, ServeModel
        >>> from gkeml_sdk.errors import SpecError
        >>> try:
        ...     ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct",
        ...                accelerator=Accelerator("l4"), env={"VLLM_API_KEY": "s3cret"})
        ... except SpecError as exc:
        ...     print(exc.fix)  # doctest: +ELLIPSIS
        secret_env={'VLLM_API_KEY': 'SECRET/KEY'} (kubectl create secret ...
    """
    engine_env = {name for name, _ in svc.engine_row.cache_env}
    reserved = engine_env | (set(TOKEN_ENV) if svc.hf_token_secret else set())
    check_secret_names(svc.secret_env, svc.env, reserved, "the engine's token and cache variables")
    for name, value in svc.env.items():
        if name in svc.not_secret or not looks_secret(name, value):
            continue
        raise fail(
            f"env {name} looks like a credential",
            rule="plain env is written into the Deployment, which everyone who can read it "
            "sees; credentials come from a Secret",
            fix=f"secret_env={{{name!r}: 'SECRET/KEY'}} (kubectl create secret generic SECRET "
            f"--from-literal=KEY=...), or not_secret=[{name!r}] if it holds no credential",
            field="env",
        )
