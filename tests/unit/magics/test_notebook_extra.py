"""IPython is the `notebook` extra: the SDK works without it, and the magics say how to get it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
WITHOUT_IPYTHON = "import sys; sys.modules['IPython'] = None\n"  # as if not installed


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_IPYTHON + code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_the_magics_without_ipython_name_the_extra():
    done = run("import gkeml_magics")
    assert done.returncode == 1
    assert "ImportError: the gkeml notebook magics need IPython" in done.stderr
    assert "pip install 'gkeml[notebook]'" in done.stderr


def test_every_sdk_module_imports_without_ipython():
    done = run(
        "import importlib, pkgutil, gkeml_sdk\n"
        "for m in pkgutil.walk_packages(gkeml_sdk.__path__, 'gkeml_sdk.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('ok')\n"
    )
    assert done.stdout == "ok\n", done.stderr


def test_ipython_is_an_extra_that_the_test_extra_pulls_in():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("ipython")]
    extras = project["optional-dependencies"]
    assert [d for d in extras["notebook"] if d.lower().startswith("ipython")]
    assert "gkeml[notebook]" in extras["test"]
