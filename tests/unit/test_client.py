"""`Client` takes typed settings for one backend, refuses contradictions, and logs under one
logger tree."""

from __future__ import annotations

import importlib
import logging
import pkgutil

import pytest

import gkeml_sdk
from gkeml_sdk import (
    Accelerator,
    Client,
    KubernetesSettings,
    LocalOptions,
    LocalSettings,
    ServeModel,
)
from gkeml_sdk.errors import ConfigError, SpecError


def test_settings_choose_the_backend(tmp_path):
    client = Client(local=LocalSettings(run_dir=tmp_path, options=LocalOptions(chaos_after=1)))
    assert repr(client) == "Client(backend='local')"
    assert client.runs() == []
    assert repr(Client(backend="local")) == "Client(backend='local')"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kubernetes": KubernetesSettings(), "local": LocalSettings()}, "not both"),
        ({"backend": "local", "kubernetes": KubernetesSettings()}, "drop backend="),
        ({"backend": "kubernetes", "local": LocalSettings()}, "pass kubernetes= settings"),
        ({"backend": "slurm"}, "backend='local'"),
    ],
)
def test_contradictions_are_refused_before_anything_connects(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        Client(**kwargs)


@pytest.mark.parametrize(
    ("field", "value"),
    [("request_timeout", 0), ("watch_seconds", -5), ("deletion_timeout", -0.5)],
)
def test_kubernetes_settings_refuse_impossible_durations(field, value):
    with pytest.raises(SpecError, match=f"{field}={value}") as err:
        KubernetesSettings(**{field: value})
    assert err.value.fix.startswith(f"{field}=")
    KubernetesSettings(deletion_timeout=0)  # do not wait at all: allowed


def test_the_local_backend_says_it_cannot_serve(tmp_path):
    svc = ServeModel(name="qa", model="Qwen/Qwen2.5-7B-Instruct", accelerator=Accelerator("l4"))
    with pytest.raises(ConfigError, match="local backend cannot serve models"):
        Client(local=LocalSettings(run_dir=tmp_path)).serve(svc)


def test_every_logger_is_under_gkeml_sdk():
    for module in pkgutil.walk_packages(gkeml_sdk.__path__, "gkeml_sdk."):
        if module.name != "gkeml_sdk.cli.main":
            importlib.import_module(module.name)
    ours = [name for name in logging.Logger.manager.loggerDict if name.startswith("gkeml")]
    assert ours and all(name.split(".")[0] == "gkeml_sdk" for name in ours), ours
