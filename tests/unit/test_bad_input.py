"""Regression tests for issue 21's "Why": each input here once ended in a traceback from a
dependency, an unbounded error message, or an object the API server refuses."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gkeml_sdk import NodePool, SpecError, Team, Tier, TrainingJob
from gkeml_sdk.cli.main import main
from gkeml_sdk.core import spec_text
from gkeml_sdk.core.rules import check_plain_env
from gkeml_sdk.files import load_specs

JOB = "name: ft\nimage: img\ncommand: [python, t.py]\n"


def job(**kwargs: object) -> TrainingJob:
    return TrainingJob(**{"name": "ft", "image": "img", "command": ["python", "t.py"], **kwargs})


def spec(tmp_path: Path, text: str, name: str = "job.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def test_a_missing_price_file_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "gpus", "--prices", "nosuch.yaml"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("gkeml: error: nosuch.yaml: no such file") and err.count("\n") == 1


def test_a_py_spec_with_a_syntax_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"not valid Python at line 2"):
        load_specs(spec(tmp_path, "x = 1\ndef (:\n", "job.py"))


def test_a_py_spec_that_raises_says_where(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"running it raised ZeroDivisionError at line 2"):
        load_specs(spec(tmp_path, "x = 1\n1 / 0\n", "job.py"))


def test_a_yaml_integer_of_more_than_4300_digits(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="4,300 digits") as caught:
        load_specs(spec(tmp_path, JOB + "nodes: " + "9" * 5000 + "\n"))
    assert "9" * 50 not in str(caught.value)


def test_tier_like_given_as_a_list() -> None:
    with pytest.raises(SpecError, match=r"tier \['a'\] is not one of A, B, C"):
        Tier(name="gold", like=["a"])


def test_a_non_string_key_in_a_nested_mapping(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="labels"):
        load_specs(spec(tmp_path, JOB + "labels: {1: a}\n"))


@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_lone_surrogate_escape(tmp_path: Path, quote: str) -> None:
    text = JOB + f"env: {{A: {quote}\\ud800{quote}}}\n"
    if quote == "'":  # no escapes in single quotes: the six characters themselves, accepted
        assert load_specs(spec(tmp_path, text))[0].env == {"A": "\\ud800"}
        return
    with pytest.raises(SpecError, match="half of a UTF-16 pair"):
        load_specs(spec(tmp_path, text))


@pytest.mark.parametrize("field", ["max_nodes", "min_nodes", "initial_nodes", "max_run_seconds"])
def test_node_pool_numbers_beyond_int32(field: str) -> None:
    kwargs = {"provisioning": "flex-start"} if field == "max_run_seconds" else {}
    with pytest.raises(SpecError, match=r"32-bit integer|min_nodes"):
        NodePool(name="l4", hardware={"model": "l4"}, **{field: 2**40}, **kwargs)


def test_a_spec_file_beyond_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as out:
        out.truncate(spec_text.MAX_SPEC_BYTES + 1)  # sparse: no disk is filled
    with pytest.raises(SpecError, match=r"larger than 4 MiB \(rule: .* up to 4194304 bytes"):
        load_specs(path)


def alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x"]']
    for level in range(1, levels + 1):
        refs = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return JOB + "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    text = alias_bomb(7)  # 9**8 nodes expanded, from a few hundred bytes
    assert len(text) < 1000
    with pytest.raises(SpecError, match=r"aliases expand it by \d+ nodes") as caught:
        load_specs(spec(tmp_path, text))
    assert len(str(caught.value)) < 400
    with pytest.raises(SpecError, match="aliases"):
        TrainingJob.from_yaml(text)


def test_a_self_referring_alias_is_refused() -> None:
    with pytest.raises(SpecError, match="refers to a node that contains it"):
        spec_text.load_yaml("a: &a [*a]\n", "x.yaml")


@pytest.mark.parametrize(
    "nested", ["[" * 100_000 + "]" * 100_000, "- " * 100_000 + "a\n"], ids=["flow", "block"]
)
def test_yaml_nested_beyond_the_c_stack_is_refused_not_a_crash(nested: str) -> None:
    # libyaml's composer recursed in C until the process died (SIGSEGV): in a subprocess,
    # so that a regression fails this test instead of ending the test run.
    code = (
        "import sys; from gkeml_sdk.core.spec_text import load_yaml\n"
        "try:\n    load_yaml(sys.stdin.read(), 'run record spec.yaml')\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", code], input=nested, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.startswith("SpecError run record spec.yaml: YAML nested more than 100")


def test_a_spec_with_many_nesting_marks_reads_the_same_through_either_parser() -> None:
    text = JOB + "env:\n" + "".join(f"  V{i}: 'a-b:c'\n" for i in range(400))
    assert sum(map(text.count, "[{-:?")) > spec_text.MAX_DEPTH  # its depth is checked
    loaded = TrainingJob.from_yaml(text)
    assert loaded.env["V399"] == "a-b:c" and len(loaded.env) == 400


def test_a_few_aliases_still_read(tmp_path: Path) -> None:
    text = JOB + "labels: &l {team: vision}\nannotations: *l\n"
    (loaded,) = load_specs(spec(tmp_path, text))
    assert loaded.annotations == {"team": "vision"}


@pytest.mark.parametrize("key", ["/team", "a/b/c", "example.com/", "Example.com/x"])
def test_label_keys_the_api_server_refuses(key: str) -> None:
    with pytest.raises(SpecError, match="not a valid Kubernetes key"):
        job(labels={key: "x"})


def test_annotations_over_256_kib_in_total() -> None:
    with pytest.raises(SpecError, match=r"annotations total 262145 bytes"):
        job(annotations={"a": "x" * (128 * 1024), "b": "x" * (128 * 1024 - 1)})
    job(annotations={"a": "x" * (128 * 1024), "b": "x" * (128 * 1024 - 2)})


def test_configmap_keys_over_253_characters() -> None:
    path = "pkg/" * 60 + "main.py"
    with pytest.raises(SpecError, match="must be no more than 253 characters"):
        TrainingJob(name="ft", command=["python", "main.py"], files={path: ""})


def test_credentials_in_plain_env_are_refused_with_the_fix() -> None:
    with pytest.raises(SpecError, match=r"env HF_TOKEN .*Try: secret_env=\{'HF_TOKEN'"):
        job(env={"HF_TOKEN": "hf_" + "a" * 34})
    with pytest.raises(SpecError, match="WANDB_API_KEY"):
        check_plain_env({"WANDB_API_KEY": "0123456789abcdef0123"})
    check_plain_env({"TOKENIZERS_PARALLELISM": "false", "MAX_TOKENS": "4096", "KEY": "x"})


def test_validate_and_render_help_say_a_py_file_is_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in ("validate", "render"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "is run as Python code" in " ".join(capsys.readouterr().out.split())


def test_cost_hours_must_be_finite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path, JOB)
    assert main(["render", str(path), "--cost", "nan"]) == 1
    assert "positive, finite duration" in capsys.readouterr().err


def test_a_file_name_longer_than_the_file_system_allows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["render", "x" * 300]) == 1  # found by tests/bench/bench_fuzz.py
    assert capsys.readouterr().err.count("\n") == 1


def _one_line_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("gkeml: error: ") and err.count("\n") == 1
    assert len(err) < 10_000
    return err


def test_one_long_string_aliased_thousands_of_times_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 3.6 MB written, 3.6 GB once expanded: counted in characters, not in nodes.
    text = JOB + 'big: &s "' + "y" * 400_000 + '"\nl: [' + ",".join(["*s"] * 9_000) + "]\n"
    err = _one_line_error(["validate", str(spec(tmp_path, text))], capsys)
    assert "aliases expand its values to 3,600,4" in err
    a_few = JOB + 'labels: &l {team: "' + "v" * 60 + '"}\nannotations: *l\n'
    assert load_specs(spec(tmp_path, a_few))[0].annotations == {"team": "v" * 60}


def test_a_key_written_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = JOB + "command: [python, other.py]\n"
    err = _one_line_error(["validate", str(spec(tmp_path, text))], capsys)
    assert "key 'command' appears twice (lines 3 and 4)" in err
    with pytest.raises(SpecError, match="key 'b' appears twice"):
        spec_text.load_yaml("a: {b: 1, b: 2}\n", "x.yaml")
    # A merge key may be overridden: that is what merging is for.
    assert spec_text.load_yaml("<<: {a: 1}\na: 2\n", "x.yaml") == {"a": 2}


@pytest.mark.parametrize("text", ["[" * 100_000, "- " * 100_000 + "x", "{a: " * 100_000])
def test_yaml_nested_beyond_any_spec_is_refused_without_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    # libyaml composes recursively in C: read through it, these ended the process.
    err = _one_line_error(["validate", str(spec(tmp_path, text))], capsys)
    assert "YAML nested more than 100 levels deep" in err


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/dev/zero", "not a regular file (a device, pipe or socket)"),
        ("/", "a directory, not a file"),
        ("/nonexistent/tenants.yaml", "no such file"),
    ],
)
def test_files_that_are_no_spec_files_are_one_line(
    capsys: pytest.CaptureFixture[str], path: str, said: str
) -> None:
    assert said in _one_line_error(["validate", path], capsys)
    install = ["controller", "install", "--namespace", "ml", "--tenants", path, "--dry-run"]
    assert said in _one_line_error(install, capsys)


def test_terminal_escapes_in_a_file_name_are_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("red\x1b[31m.yaml", "two\nlines.yaml"):
        err = _one_line_error(["validate", str(tmp_path / name)], capsys)
        assert "\x1b" not in err
        assert ("red\\x1b[31m.yaml" if "red" in name else "two\\x0alines.yaml") in err
        path = spec(tmp_path, "name: [", name)
        err = _one_line_error(["validate", str(path)], capsys)
        assert "\x1b" not in err and "not valid YAML" in err


@pytest.mark.parametrize(
    ("build", "where"),
    [
        (lambda: Team(name="a", quota={"nvidia-l4": 10**5000}), "Team.quota.nvidia-l4"),
        (lambda: job(nodes=10**5000), "TrainingJob.nodes"),
        (lambda: job(max_runtime=2**63), "TrainingJob.max_runtime"),
    ],
)
def test_whole_numbers_beyond_64_bits_are_refused_at_construction(
    build: Callable[[], object], where: str
) -> None:
    # Built, such a model could be neither printed nor written: repr() and to_yaml() raised
    # Python's "Exceeds the limit (4300 digits)".
    with pytest.raises(SpecError, match=rf"{re.escape(where)}: a whole number of \d+ bits"):
        build()
    team = Team(name="a", quota={"nvidia-l4": 2**63 - 1})
    assert "9223372036854775807" in repr(team) and "9223372036854775807" in team.to_yaml()
