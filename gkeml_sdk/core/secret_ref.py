"""`SecretRef`: one key of a Kubernetes Secret seen by a container as an environment variable
(`TrainingJob.secret_env`, `ServeModel.secret_env`), and what every spec checks about those
references and about plain env that looks like a credential. The spec holds only the
reference; the value stays in the cluster (or, locally, in the caller's env)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field, model_validator

from gkeml_sdk.core.credentials import NUMBER, credential_reason
from gkeml_sdk.core.model import DNS1123_SUBDOMAIN, SpecModel, fail

# A local run reads the value from the caller's environment variable of the same name, and
# shells export only C identifiers; Kubernetes accepts these everywhere.
C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")
MAX_SECRET_NAME = MAX_SECRET_KEY = 253


class SecretRef(SpecModel):
    """A key of a Kubernetes Secret in the job's namespace. `"wandb/api-key"` is accepted
    wherever a `SecretRef` is expected.

    Example:
        >>> from gkeml_sdk import SecretRef, TrainingJob
        >>> SecretRef("wandb", "api-key")
        SecretRef('wandb', 'api-key')
        >>> job = TrainingJob(name="ft", command=["python", "train.py"],
        ...                   secret_env={"WANDB_API_KEY": "wandb/api-key"})
        >>> job.secret_env["WANDB_API_KEY"] == SecretRef("wandb", "api-key")
        True
    """

    name: str = Field(description="The Kubernetes Secret in the job's namespace.")
    key: str = Field(description="The key inside that Secret whose value the variable gets.")

    def __init__(self, name: str | None = None, key: str | None = None, /, **data: Any) -> None:
        if name is not None:
            data["name"] = name
        if key is not None:
            data["key"] = key
        super().__init__(**data)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        if not isinstance(data, str):
            return data
        name, slash, key = data.partition("/")
        if not slash:
            raise fail(
                f"secret reference {data!r} has no key",
                rule="a reference names a Secret and one of its keys, as 'SECRET/KEY'",
                fix=f"'{data}/KEY' or SecretRef({data!r}, 'KEY')",
                field="secret_env",
            )
        return {"name": name, "key": key}

    @model_validator(mode="after")
    def _check(self) -> SecretRef:
        if len(self.name) > MAX_SECRET_NAME or not DNS1123_SUBDOMAIN.fullmatch(self.name):
            suggestion = re.sub(r"[^a-z0-9.-]+", "-", self.name.lower()).strip("-.") or "my-secret"
            raise fail(
                f"Secret name {self.name!r} is invalid",
                rule="Secret names are DNS-1123 subdomains: lower-case letters, digits, '-' and "
                f"'.', starting and ending alphanumeric, at most {MAX_SECRET_NAME} characters",
                fix=f"SecretRef({suggestion[:MAX_SECRET_NAME]!r}, {self.key!r})",
                field="secret_env",
            )
        if len(self.key) > MAX_SECRET_KEY or not SECRET_KEY.fullmatch(self.key):
            raise fail(
                f"Secret key {self.key!r} of Secret {self.name!r} is invalid",
                rule="Secret keys are letters, digits, '-', '_' and '.', "
                f"at most {MAX_SECRET_KEY} characters",
                fix=f"SecretRef({self.name!r}, 'api-key')",
                field="secret_env",
            )
        return self

    def __repr__(self) -> str:
        return f"SecretRef({self.name!r}, {self.key!r})"

    def __str__(self) -> str:
        return f"{self.name}/{self.key}"


# Substrings of env names that usually hold credentials (matched case-insensitively).
SECRET_LIKE_NAMES = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
# Prefixes of well-known credential formats (Hugging Face, OpenAI, GitHub, AWS, Slack, PEM).
SECRET_LIKE_VALUES = ("hf_", "sk-", "ghp_", "github_pat_", "AKIA", "xox", "-----BEGIN")


def secret_env_entries(secret_env: Mapping[str, SecretRef]) -> list[dict[str, Any]]:
    """Container env entries that read each variable from its Secret; values never appear.

    Example:
        >>> secret_env_entries({"HF_TOKEN": SecretRef("hf", "token")})
        [{'name': 'HF_TOKEN', 'valueFrom': {'secretKeyRef': {'name': 'hf', 'key': 'token'}}}]
    """
    return [
        {"name": env, "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key}}}
        for env, ref in secret_env.items()
    ]


def looks_secret(name: str, value: str) -> bool:
    """True when a plain env entry's name or value looks like a credential.

    Example:
        >>> looks_secret("OPENAI_API_KEY", "x"), looks_secret("MODE", "hf_abc")
        (True, True)
        >>> looks_secret("LR", "1"), looks_secret("MAX_TOKEN_COUNT", "4096")
        (False, False)
    """
    if credential_reason(value, name) is not None:  # a token's shape, or named and random
        return True
    if NUMBER.fullmatch(value.strip()):  # MAX_TOKENS=4096: a name alone never refuses a number
        return False
    return any(word in name.upper() for word in SECRET_LIKE_NAMES) or value.startswith(
        SECRET_LIKE_VALUES
    )


def check_secret_names(
    secret_env: Mapping[str, SecretRef],
    env: Mapping[str, str],
    reserved: Iterable[str] = (),
    why_reserved: str = "gkeml sets this variable itself in every container",
) -> None:
    """Env names of Secret references: C identifiers, not set by `env` nor in `reserved`.

    Example:
        >>> check_secret_names({"HF_TOKEN": SecretRef("hf", "token")}, {"HF_TOKEN": "x"})
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: env 'HF_TOKEN' is set by both env and secret_env ...
    """
    taken = frozenset(reserved)
    for name in secret_env:
        if not C_IDENTIFIER.fullmatch(name):
            raise fail(
                f"secret_env name {name!r} is invalid",
                rule="names of secret variables are C identifiers (letters, digits and '_', "
                "not starting with a digit) so a local run can read them from the environment",
                fix="e.g. secret_env={'WANDB_API_KEY': 'wandb/api-key'}",
                field="secret_env",
            )
        if name in env:
            raise fail(
                f"env {name!r} is set by both env and secret_env",
                rule="a variable has one source: a plain value or a Secret reference",
                fix=f"remove {name} from env (keep the Secret reference)",
                field="secret_env",
            )
        if name in taken:
            raise fail(
                f"secret_env {name!r} is set by gkeml for every process",
                rule=why_reserved,
                fix=f"another name; reserved names: {', '.join(sorted(taken))}",
                field="secret_env",
            )
