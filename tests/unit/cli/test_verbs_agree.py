"""The `gkeml` verbs agree with each other and with docs/cli.md: every option says what it is
for, every command takes --version, a mistake shows that command's usage, the .py examples the
docs name work where YAML does, and `python -m gkeml_sdk.cli` is the same command."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gkeml_sdk import __version__
from gkeml_sdk.cli.main import _parser, main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"


def commands(
    parser: argparse.ArgumentParser, words: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                yield from commands(sub, f"{words} {word}".strip())


ALL = list(commands(_parser(None)))


def test_every_option_and_argument_has_help() -> None:
    missing = [
        f"gkeml {words}: {'/'.join(action.option_strings) or action.dest}"
        for words, parser in ALL
        for action in parser._actions
        if not action.help and not isinstance(action, argparse._SubParsersAction)
    ]
    assert missing == []


@pytest.mark.parametrize("words", [w for w, _ in ALL])
def test_every_command_takes_version(words: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*words.split(), "--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"gkeml {__version__}\n"


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["submit", "x.yaml", "--bogus"], "usage: gkeml submit "),
        (["setup", "plan", "s.yaml", "--bogus"], "usage: gkeml setup plan "),
        (["runs", "-o", "xml"], "usage: gkeml runs "),
    ],
)
def test_a_commands_mistake_shows_that_commands_usage(
    argv: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith(usage), err
    assert f"\n{usage.removeprefix('usage: ').strip()}: error: " in err


@pytest.mark.parametrize("command", ["setup", "tenant", "nodepool", "controller"])
def test_a_command_without_its_verb_lists_the_verbs(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command]) == 2
    assert capsys.readouterr().out.startswith(f"usage: gkeml {command} [-h] [--version] VERB")


def test_setup_and_nodepool_plan_read_the_python_examples(capsys) -> None:
    assert main(["setup", "plan", str(EXAMPLES / "setup_cluster.py"), "--offline"]) == 0
    assert "kind: ClusterQueue" in capsys.readouterr().out
    assert main(["nodepool", "plan", str(EXAMPLES / "node_pools.py")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# NodePool('h100-dws'") and "# NodePool('v5e-spot'" in out


def test_a_python_file_without_the_object_says_so(capsys) -> None:
    assert main(["setup", "plan", str(EXAMPLES / "train_gpu.py"), "--offline"]) == 1
    assert "defines no ClusterSetup at module level" in capsys.readouterr().err


def test_submit_preview_takes_a_setup_file(tmp_path: Path, capsys) -> None:
    (tmp_path / "setup.yaml").write_text(
        "kind: ClusterSetup\ncapacity:\n- accelerator: {model: h100, count: 8}\n"
        "teams:\n- {name: research, namespaces: [research], quota: {h100: 16}}\n"
    )
    (tmp_path / "job.yaml").write_text(
        "name: ft\nnamespace: research\nqueue: research\nimage: img\ncommand: [x]\n"
        "accelerator: {model: h100, count: 8}\nnodes: 2\n"
    )
    job, setup = str(tmp_path / "job.yaml"), str(tmp_path / "setup.yaml")
    assert main(["submit", job, "--preview", "--setup", setup]) == 0
    via_submit = capsys.readouterr().out
    assert main(["preview", job, "--setup", setup]) == 0
    assert via_submit == capsys.readouterr().out and via_submit.startswith("ft: Fits now")
    assert main(["submit", job, "--setup", setup]) == 1
    assert "--setup without --preview" in capsys.readouterr().err


def test_render_plan_without_a_serve_model_is_refused(capsys) -> None:
    assert main(["render", str(EXAMPLES / "train_gpu.py"), "--plan"]) == 1
    assert "--plan shows the serving plan of a ServeModel" in capsys.readouterr().err
    assert main(["render", str(EXAMPLES / "serve_vllm.py"), "--plan"]) == 0
    out, err = capsys.readouterr()
    assert "kind: Deployment" in out and "# ServeModel 'chat'" in err and "cost for" not in err


def test_python_m_gkeml_sdk_cli_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gkeml_sdk.cli", "--version"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == f"gkeml {__version__}\n", done.stderr


def test_docs_cli_names_every_command() -> None:
    page = (ROOT / "docs" / "cli.md").read_text()
    assert all(f"`gkeml {words}" in page for words, _ in ALL if words), [
        words for words, _ in ALL if words and f"`gkeml {words}" not in page
    ]
