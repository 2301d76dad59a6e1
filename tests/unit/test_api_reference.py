"""The API reference documents the public names, each once, and no module path."""

from __future__ import annotations

import re
from pathlib import Path

import gkeml_sdk

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "api.md"


def test_the_api_reference_is_the_public_names() -> None:
    entries = re.findall(r"^::: (\S+)$", PAGE.read_text(encoding="utf-8"), flags=re.M)
    paths = [e for e in entries if not re.fullmatch(r"gkeml_sdk\.[A-Za-z_]+", e)]
    assert not paths, f"document the public name, not the module path: {paths}"
    names = [e.removeprefix("gkeml_sdk.") for e in entries]
    public = set(gkeml_sdk.__all__) - {"__version__"}
    assert len(names) == len(set(names)), "a name is documented twice"
    assert set(names) == public, (
        f"missing: {sorted(public - set(names))}; not public: {sorted(set(names) - public)}"
    )
