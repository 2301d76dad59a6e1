"""The examples in the serving modules' docstrings run and print what they claim."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "gkeml_sdk.catalog.engines",
    "gkeml_sdk.catalog.models",
    "gkeml_sdk.spec.autoscaling",
    "gkeml_sdk.spec.model_size",
    "gkeml_sdk.spec.routing",
    "gkeml_sdk.spec.serve",
    "gkeml_sdk.spec.serve_checks",
    "gkeml_sdk.spec.serve_hardware",
    "gkeml_sdk.spec.serve_plan",
    "gkeml_sdk.spec.sizing",
    "gkeml_sdk.compile.autoscaling",
    "gkeml_sdk.compile.routing",
    "gkeml_sdk.compile.server_container",
    "gkeml_sdk.compile.serving",
    "gkeml_sdk.compile.serving_labels",
    "gkeml_sdk.compile.serving_notes",
    "gkeml_sdk.cluster.serving_status",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
