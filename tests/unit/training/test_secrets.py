"""`TrainingJob.secret_env`: flat forms that round-trip, and every rule a reference follows."""

from __future__ import annotations

import pytest

from gkeml_sdk import SecretRef, SpecError, TrainingJob
from gkeml_sdk.core.environment import RESERVED_ENV


def job(**kwargs: object) -> TrainingJob:
    return TrainingJob(**{"name": "ft", "image": "img", "command": ["python", "t.py"], **kwargs})


def test_the_flat_forms_are_one_reference() -> None:
    forms = [
        SecretRef("wandb", "api-key"),
        SecretRef(name="wandb", key="api-key"),
        "wandb/api-key",
        {"name": "wandb", "key": "api-key"},
    ]
    jobs = [job(secret_env={"WANDB_API_KEY": form}) for form in forms]
    assert all(j == jobs[0] for j in jobs)
    assert str(jobs[0].secret_env["WANDB_API_KEY"]) == "wandb/api-key"


def test_secret_env_round_trips_through_yaml_and_copies() -> None:
    original = job(secret_env={"HF_TOKEN": "hf.tokens/token", "WANDB_API_KEY": "wandb/key"})
    assert TrainingJob.from_yaml(original.to_yaml()) == original
    assert original.with_changes(spot=True).secret_env == original.secret_env
    assert TrainingJob.from_yaml("name: a\ncommand: [x]\nsecret_env: {T: s/k}\n").secret_env == {
        "T": SecretRef("s", "k")
    }


def test_derived_names_are_unchanged_without_secrets_and_differ_with_them() -> None:
    plain = TrainingJob.from_code("print('hello')", image="python:3.12")
    assert plain.name == "code-0d736fbf"  # as before secret_env existed
    with_secret = TrainingJob.from_code(
        "print('hello')", image="python:3.12", secret_env={"T": "s/k"}
    )
    assert with_secret.name != plain.name


@pytest.mark.parametrize("name", ["A\n", "1ABC", "MY-VAR", "MY.VAR", "", "A B", "É"])
def test_env_names_are_c_identifiers(name: str) -> None:
    with pytest.raises(SpecError, match="C identifiers") as info:
        job(secret_env={name: "s/k"})
    assert info.value.field == "secret_env"


def test_a_name_is_either_plain_or_secret() -> None:
    with pytest.raises(SpecError, match="set by both env and secret_env") as info:
        job(env={"HF_TOKEN": "x"}, secret_env={"HF_TOKEN": "hf/token"})
    assert "remove HF_TOKEN from env" in info.value.fix


@pytest.mark.parametrize("name", sorted(RESERVED_ENV))
def test_contract_names_are_refused(name: str) -> None:
    with pytest.raises(SpecError, match="set by gkeml for every process"):
        job(secret_env={name: "s/k"})


@pytest.mark.parametrize(
    "secret", ["Wandb", "wandb\n", "-wandb", "wandb-", "wand_b", "a" * 254, "a..b", ""]
)
def test_secret_names_are_dns1123_subdomains(secret: str) -> None:
    with pytest.raises(SpecError, match=r"Secret name .* is invalid") as info:
        job(secret_env={"T": SecretRef(secret, "key")})
    assert "DNS-1123" in info.value.rule


def test_a_long_valid_secret_name_is_accepted() -> None:
    name = ".".join(["a" * 63] * 3) + "." + "b" * 61  # 253 characters
    assert job(secret_env={"T": SecretRef(name, "k")}).secret_env["T"].name == name


@pytest.mark.parametrize("key", ["key\n", "a b", "", "x" * 254, "a/b", "ключ"])
def test_secret_keys_follow_the_secret_key_rule(key: str) -> None:
    with pytest.raises(SpecError, match=r"Secret key .* is invalid"):
        job(secret_env={"T": SecretRef("wandb", key)})


def test_secret_keys_may_use_dots_dashes_and_underscores() -> None:
    assert job(secret_env={"T": "s/.dot-dash_under.json"}).secret_env["T"].key == (
        ".dot-dash_under.json"
    )


def test_text_without_a_key_says_how_to_write_one() -> None:
    with pytest.raises(SpecError, match="has no key") as info:
        job(secret_env={"T": "wandb"})
    assert "'wandb/KEY'" in info.value.fix


def test_unknown_reference_fields_are_refused() -> None:
    with pytest.raises(SpecError, match="unknown field"):
        job(secret_env={"T": {"name": "s", "key": "k", "value": "leak"}})
