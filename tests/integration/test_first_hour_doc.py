"""Every code block of docs/first-hour.md runs: shell commands in a subprocess, `ipython`
blocks in a real IPython shell, `python` blocks as they are. The install command is checked
against pyproject.toml instead of run (it would install from the package index)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "first-hour.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.+?)\n```", PAGE.read_text(), re.S)


@pytest.fixture
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return dict(os.environ)


def test_the_install_command_names_an_extra_the_package_has() -> None:
    install = [b for b in blocks("bash") if b.startswith("pip install")]
    assert install == ["pip install -e '.[notebook]'"]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "notebook" in extras["optional-dependencies"]


def test_shell_blocks_run_and_say_what_the_page_says(no_cluster: dict[str, str]) -> None:
    commands = [b for b in blocks("bash") if not b.startswith("pip install")]
    assert commands == ["python examples/quickstart.py", "gkeml runs"]
    outputs = []
    for command in commands:
        argv = command.split()
        if argv[0] == "python":
            argv[0] = sys.executable
        else:
            argv = [sys.executable, "-m", "gkeml_sdk.cli.main", *argv[1:]]
        done = subprocess.run(argv, cwd=ROOT, env=no_cluster, capture_output=True, text=True,
                              timeout=180, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        outputs.append(done.stdout.splitlines())
    quickstart, runs = outputs
    shown = blocks("text")[0].splitlines()
    assert quickstart[0] == shown[0] and quickstart[-2] == shown[-2]
    assert re.sub(r"[\d.]+ s", "", quickstart[-1]) == re.sub(r"[\d.]+ s", "", shown[-1])
    assert runs[0].startswith("no cluster configured (") and runs[2].startswith("quickstart ")


def test_notebook_blocks_run_in_ipython(no_cluster: dict[str, str]) -> None:
    shell = InteractiveShell.instance()
    for block in blocks("ipython"):
        cells = [block] if block.startswith("%%") else block.splitlines()
        for cell in cells:
            with capture_output() as captured:
                result = shell.run_cell(cell)
            assert result.success, f"{cell}: {result.error_in_exec}"
            assert "Traceback" not in captured.stderr
            if cell.startswith("%gke_cost"):
                assert repr(result.result).startswith("1/7 of one NVIDIA A100 80GB GPU")
            if cell.startswith("%gke_status"):
                assert "first-hour (default): Succeeded" in repr(result.result)
                assert 'data-picture="run-timeline"' in result.result._repr_html_()


def test_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    for block in blocks("python"):
        exec(compile(block, str(PAGE), "exec"), {})
    assert "1/7 of one NVIDIA A100 80GB GPU for 10 h" in capsys.readouterr().out
