"""ServeModel.secret_env: values come from Secrets, never sit in the Deployment; plain env that
looks like a credential is refused with the fix, unless `not_secret` names it."""

from __future__ import annotations

import pytest

import tests.schemas
from gkeml_sdk import Accelerator, SecretRef, ServeModel
from gkeml_sdk.errors import SpecError


def make(**kw) -> ServeModel:
    return ServeModel(
        name="qa", model="Qwen/Qwen2.5-7B-Instruct", accelerator=Accelerator("l4"), **kw
    )


def env_of(svc: ServeModel) -> list[dict]:
    return svc.compile().main["spec"]["template"]["spec"]["containers"][0]["env"]


def test_secret_env_reads_from_the_secret():
    svc = make(secret_env={"VLLM_API_KEY": "vllm/api-key", "OTHER": SecretRef("s", "k")})
    env = env_of(svc)
    assert {
        "name": "VLLM_API_KEY",
        "valueFrom": {"secretKeyRef": {"name": "vllm", "key": "api-key"}},
    } in env
    assert "api-key" not in str([e.get("value") for e in env])
    tests.schemas.validate_object(svc.compile().main)
    assert ServeModel.from_yaml(svc.to_yaml()) == svc


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({"OPENAI_API_KEY": "sk-proj-0123"}, "env"),
        ({"WANDB_TOKEN": "abc123xyz"}, "env"),
        ({"MODE": "hf_abcdefgh"}, "env"),  # the value has a credential's shape
        ({"DB_PASSWORD": "pa55-w0rd!"}, "env"),
    ],
)
def test_plain_env_that_looks_secret_is_refused_with_the_fix(env, field):
    with pytest.raises(SpecError) as err:
        make(env=env)
    name = next(iter(env))
    assert err.value.field == field
    assert f"secret_env={{'{name}': 'SECRET/KEY'}}" in err.value.fix
    assert f"not_secret=['{name}']" in err.value.fix
    assert env[name] not in str(err.value)  # the value is never echoed


def test_not_secret_is_the_explicit_opt_in():
    svc = make(env={"MAX_KEY_LENGTH": "128"}, not_secret=["MAX_KEY_LENGTH"])
    assert {"name": "MAX_KEY_LENGTH", "value": "128"} in env_of(svc)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        (
            {"secret_env": {"X": "s/k"}, "env": {"X": "1"}, "not_secret": ["X"]},
            "both env and secret_env",
        ),
        ({"secret_env": {"HF_TOKEN": "s/k"}, "hf_token_secret": "hf"}, "set by gkeml"),
        ({"secret_env": {"1X": "s/k"}}, "C identifiers"),
        ({"secret_env": {"X": "no-key"}}, "has no key"),
    ],
)
def test_secret_references_are_checked(changes, match):
    with pytest.raises(SpecError, match=match):
        make(**changes)
