"""The credential shapes of issue 38, each refused with the way to `secret_env`, wherever a
spec puts clear text; ordinary numbers and values never are."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gkeml_sdk import Accelerator, ServeModel, SpecError, TrainingJob

HF = "hf_" + "Qk3vR8sT2uW9xY4zA7bC1dE5fG6hJ0mN"  # 32 characters after hf_, as issued
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # 40 characters with '/'
WANDB = "da39a3ee5e6b4b0d3255bfef95601890afd80709"  # 40 hex digits


def job(**changes: object) -> TrainingJob:
    return TrainingJob(**{"name": "ft", "image": "img", "command": ["python", "t.py"], **changes})


def serve(**changes: object) -> ServeModel:
    fields = {"name": "qa", "model": "Qwen/Qwen2.5-7B-Instruct", "accelerator": Accelerator("l4")}
    return ServeModel(**{**fields, **changes})


CASES: dict[str, Callable[[], object]] = {
    "AWS secret key with '/'": lambda: job(env={"AWS_SECRET_ACCESS_KEY": AWS_SECRET}),
    "DATABASE_URL with a password": lambda: job(
        env={"DATABASE_URL": "postgres://app:Tr0ub4dor3@db.internal:5432/runs"}
    ),
    "Bearer token": lambda: job(env={"AUTH_HEADER": f"Bearer {HF}"}),
    "40-hex WANDB_KEY": lambda: job(env={"WANDB_KEY": WANDB}),
    "--hf-token in args": lambda: job(args=["--hf-token", HF]),
    "--api-key= in args": lambda: job(args=[f"--api-key={WANDB}"]),
    "--api-key sk- in extra_args": lambda: serve(extra_args=["--api-key", "sk-" + "Ab1" * 12]),
    "token in a code file": lambda: job(files={"t.py": f"TOKEN = '{HF}'\n"}),
    "token as a label value": lambda: job(labels={"hf": HF}),
    "DATABASE_URL in a ServeModel's env": lambda: serve(
        env={"DATABASE_URL": "postgres://app:Tr0ub4dor3@db:5432/x"}
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_credential_shape_is_refused_pointing_at_secret_env(case: str) -> None:
    with pytest.raises(SpecError, match="looks like a credential") as caught:
        CASES[case]()
    assert "secret_env" in str(caught.value)
    for secret in (HF, AWS_SECRET, WANDB, "Tr0ub4dor3"):
        assert secret not in str(caught.value)  # the value is never echoed


@pytest.mark.parametrize(
    "env",
    [
        {"MAX_TOKEN_COUNT": "4096"},
        {"MAX_TOKENS": "131072", "TOKEN_BUDGET": "1e6", "API_KEY_TIMEOUT": "0.5"},
        {"GIT_SHA": WANDB},  # random, but nothing says a secret belongs there
        {"GOOGLE_APPLICATION_CREDENTIALS": "/var/secrets/google/key.json"},
        {"HF_HOME": "/cache/hf", "TOKENIZERS_PARALLELISM": "false"},
        {"SERVICE_URL": "http://chat.ml.svc.cluster.local:8000/v1"},
        {"DB_URL": "postgres://app:$(DB_PASSWORD)@db:5432/runs"},
    ],
)
def test_ordinary_values_and_numbers_are_never_refused(env: dict[str, str]) -> None:
    assert job(env=env).env == env
    assert job(args=[f"--{k.lower().replace('_', '-')}" if i % 2 == 0 else v
                     for i, (k, v) in enumerate(env.items())])  # fmt: skip


@pytest.mark.parametrize("name", ["MAX_TOKEN_COUNT", "VLLM_MAX_TOKENS", "API_KEY_TTL", "SECRET_N"])
def test_a_serving_env_number_is_never_a_credential_whatever_its_name(name: str) -> None:
    # A name alone decides for other serving env values (not_secret=[...] opts out).
    assert serve(env={name: "4096"}).env == {name: "4096"}
    with pytest.raises(SpecError, match="looks like a credential"):
        serve(env={name: "s3cret"})
