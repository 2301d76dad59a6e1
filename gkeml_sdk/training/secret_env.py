"""`TrainingJob.secret_env`: the rules its Secret references follow, the trainer container's
env entries that read them, and a note for plain env that looks like it carries a secret (its
value would be in every manifest and run record). `SecretRef` itself lives in
`gkeml_sdk.core.secret_ref`, shared with serving."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gkeml_sdk.core.secret_ref import SecretRef, check_secret_names

if TYPE_CHECKING:
    from gkeml_sdk.training.fields import TrainingJobFields


# Substrings of env names that usually hold credentials (matched case-insensitively).
SECRET_LIKE_NAMES = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")


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


def secret_env_entries(job: TrainingJobFields) -> list[dict[str, Any]]:
    """Container env entries that read `job.secret_env` from Secrets; values never appear.

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="ft", command=["x"], secret_env={"HF_TOKEN": "hf/token"})
        >>> secret_env_entries(job)
        [{'name': 'HF_TOKEN', 'valueFrom': {'secretKeyRef': {'name': 'hf', 'key': 'token'}}}]
    """
    return [
        {"name": env, "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}}}
        for env, ref in job.secret_env.items()
    ]


def secret_like_env_notes(job: TrainingJobFields) -> list[str]:
    """A note per plain `env` entry whose name suggests a credential (not refused: it may be
    a key size or a public token; the note names the variable, never its value).

    Example:
        >>> from gkeml_sdk import TrainingJob
        >>> job = TrainingJob(name="ft", command=["x"], env={"WANDB_API_KEY": "abc", "LR": "1"})
        >>> secret_like_env_notes(job)  # doctest: +ELLIPSIS
        ["env WANDB_API_KEY looks like a secret: its value is written into the manifests ..."]
    """
    return [
        f"env {name} looks like a secret: its value is written into the manifests and the run "
        f"record in plain text; put it in a Secret and use secret_env={{'{name}': "
        f"'SECRET/KEY'}} instead"
        for name in job.env
        if any(word in name.upper() for word in SECRET_LIKE_NAMES)
    ]
