"""The example in every public docstring runs and prints what it claims."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gkeml_sdk

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(gkeml_sdk.__path__, "gkeml_sdk.")
    if "__main__" not in m.name
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
