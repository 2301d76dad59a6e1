"""The `gkeml` process starts fast: it imports only the command it runs, and rendering skips
pydantic's plugin scan. (The timing itself is tests/bench/bench_cli.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gkeml_sdk.cli.main import main

V5E_16 = (
    "name: w\nimage: img\ncommand: [python3, train.py]\n"
    "accelerator: {generation: v5e, topology: 4x4}\n"
)

# Runs `gkeml ARGS...` as the console script does (argv from sys.argv), then reports which
# modules were imported, whether any code looked up entry points, and the plugin setting.
PROCESS = """
import importlib.metadata as metadata, json, os, sys
scans = []
real = metadata.entry_points
def spy(**params):
    scans.append(params.get("group"))
    return real(**params)
metadata.entry_points = spy
from gkeml_sdk.cli.main import main
sys.argv = ["gkeml", *sys.argv[1:]]
code = main()
plugins = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
report = {"code": code, "scans": scans, "modules": sorted(sys.modules), "plugins": plugins}
print(json.dumps(report), file=sys.stderr)
"""


# The same without the spy.
PLAIN_PROCESS = """
import json, sys
from gkeml_sdk.cli.main import main
sys.argv = ["gkeml", *sys.argv[1:]]
code = main()
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def run_cli(*args: str, home: Path | None = None, process: str = PROCESS) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if home is not None:
        env["HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", process, *args], capture_output=True, text=True, env=env
    )
    report: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return report


@pytest.fixture
def v5e_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "v5e.yaml"
    spec.write_text(V5E_16)
    return spec


def test_render_imports_only_the_render_command(v5e_spec):
    report = run_cli("render", str(v5e_spec))
    assert report["code"] == 0
    modules = set(report["modules"])  # type: ignore[call-overload]
    assert "gkeml_sdk.cli.render_commands" in modules
    for unused in (
        "gkeml_sdk.cli.run_commands",
        "gkeml_sdk.cli.catalog_commands",
        "gkeml_sdk.client",
        "gkeml_sdk.pricing.catalog",
        "gkeml_sdk.serving.catalog",
        "gkeml_sdk.serving.model",
        "kubernetes",
    ):
        assert unused not in modules, f"`gkeml render` imported {unused}"


def test_render_imports_no_misspelling_helpers(v5e_spec):
    # The misspelling helpers and the .py spec runner stay out of a render when the spec has
    # no mistake. (The volume models load with TrainingJob: its field is their union.)
    report = run_cli("render", str(v5e_spec), process=PLAIN_PROCESS)
    assert report["code"] == 0
    modules = set(report["modules"])  # type: ignore[call-overload]
    for unused in (
        "difflib",
        "runpy",
        "traceback",
    ):
        assert unused not in modules, f"`gkeml render` imported {unused}"


def test_render_skips_pydantic_plugin_discovery(v5e_spec):
    report = run_cli("render", str(v5e_spec))
    assert report["scans"] == [] and report["plugins"] == "__all__"


def test_commands_that_start_processes_keep_plugin_discovery(tmp_path):
    # `gkeml runs --local` may start user code later: its environment is left alone.
    report = run_cli("runs", "--local", home=tmp_path)
    assert report["code"] == 0 and report["plugins"] is None


def test_main_called_in_process_leaves_the_environment_alone(v5e_spec, capsys, monkeypatch):
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    assert main(["render", str(v5e_spec)]) == 0
    assert "PYDANTIC_DISABLE_PLUGINS" not in os.environ


def test_help_and_unknown_commands_still_list_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("render", "validate", "catalog", "submit", "logs", "serve"):
        assert command in out
    with pytest.raises(SystemExit):
        main(["rendr"])
    assert "invalid choice: 'rendr'" in capsys.readouterr().err
