"""`TrainingJob.secret_env`: the rules its Secret references follow. `SecretRef` itself lives
in `gkeml_sdk.core.secret_ref`, shared with serving."""

from __future__ import annotations

from collections.abc import Mapping

from gkeml_sdk.core.secret_ref import SecretRef, check_secret_names

__all__ = ["SecretRef", "check_secret_env"]


def check_secret_env(secret_env: Mapping[str, SecretRef], env: Mapping[str, str]) -> None:
    """Env names of Secret references: C identifiers, not set by `env` nor by gkeml.

    Example:
        >>> check_secret_env({"HF_TOKEN": SecretRef("hf", "token")}, {"HF_TOKEN": "x"})
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: env 'HF_TOKEN' is set by both env and secret_env ...
    """
    from gkeml_sdk.core.environment import RESERVED_ENV

    check_secret_names(
        secret_env,
        env,
        RESERVED_ENV,
        "the environment contract fixes ranks, coordinator and checkpoint paths",
    )
