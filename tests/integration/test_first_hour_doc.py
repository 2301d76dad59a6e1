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
    outputs, notes = [], []
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
        notes.append(done.stderr)
    quickstart, runs = outputs
    shown = blocks("text")[0].splitlines()
    assert quickstart[0] == shown[0] and quickstart[-2] == shown[-2]
    assert re.sub(r"[\d.]+ s", "", quickstart[-1]) == re.sub(r"[\d.]+ s", "", shown[-1])
    assert notes[1].startswith("no cluster configured (") and notes[1].count("\n") == 1
    assert runs[0].split() == ["name", "state", "reason"] and runs[1].startswith("quickstart ")


def test_notebook_blocks_run_in_ipython(no_cluster: dict[str, str]) -> None:
    shell = InteractiveShell.instance()
    shown: list[dict[str, str]] = []
    for block in blocks("ipython"):
        with capture_output() as captured:
            result = shell.run_cell(block)  # a block is one cell, as the page shows it
        assert result.success, f"{block}: {result.error_in_exec}"
        assert "Traceback" not in captured.stderr
        if block.startswith("%%gke_train"):  # the hello-world chaos: one preemption
            out = captured.stdout
            for rank, attempt in ((0, 0), (1, 0), (0, 1), (1, 1)):
                assert f"[{rank}] hello from rank {rank} of 2 attempt {attempt}" in out, out
            timeline = captured.outputs[-1].data["text/html"]
            assert 'data-part="Preempted"' in timeline and "attempt 2" in timeline
        shown = [dict(o.data) for o in captured.outputs]
    status, jobs, cost = shown  # each magic of the last cell shows
    assert "first-hour (default): Succeeded" in status["text/plain"]
    assert 'data-picture="run-timeline"' in status["text/html"]
    assert "first-hour" in jobs["text/plain"]
    assert cost["text/plain"].startswith("1/7 of one NVIDIA A100 80GB GPU")


def test_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    for block in blocks("python"):
        exec(compile(block, str(PAGE), "exec"), {})
    assert "1/7 of one NVIDIA A100 80GB GPU for 10 h" in capsys.readouterr().out
