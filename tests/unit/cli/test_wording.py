"""The CLI prints library errors with the advice in its own flags: the library says
`Client(backend='local')`, `gkeml` says `--local`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gkeml_sdk.cli.main import main
from gkeml_sdk.cli.wording import cli_words

ROOT = Path(__file__).resolve().parents[3]
PYTHON_ADVICE = ("Client(", "svc.compile()", "kubeconfig=/", "max_resubmits=")


@pytest.fixture(autouse=True)
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def error_of(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 1
    err = capsys.readouterr().err
    assert not any(python in err for python in PYTHON_ADVICE), err
    return err


def test_no_cluster_names_the_cli_flags(capsys, tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text("name: a\nimage: img\ncommand: [python, train.py]\n")
    err = error_of(capsys, "submit", str(spec))
    assert "--kubeconfig/--context" in err and "run it here with --local" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("tenant", "status", str(ROOT / "examples" / "tenants.yaml")),
        ("tenant", "apply", str(ROOT / "examples" / "tenants.yaml")),
        ("setup", "apply", str(ROOT / "docs" / "no-such-setup.yaml")),
    ],
)
def test_commands_that_need_a_cluster_do_not_advise_local(capsys, argv):
    err = error_of(capsys, *argv)
    assert "--kubeconfig/--context" in err and "--local" not in err


def test_unknown_local_run_points_at_gkeml_runs(capsys):
    assert "list the runs with gkeml runs --local" in error_of(capsys, "cancel", "nope", "--local")


def test_serving_locally_points_at_a_cluster_or_render(capsys):
    err = error_of(capsys, "serve", str(ROOT / "examples" / "serve_vllm.py"), "--local")
    assert "serve on a cluster (without --local), or see the manifests with gkeml render" in err


def test_retry_limits_name_the_submit_flags(tmp_path, capsys):
    spec = tmp_path / "job.yaml"
    spec.write_text("name: ft\nimage: img\ncommand: [x]\n")
    err = error_of(capsys, "submit", str(spec), "--local", "--max-resubmits", "500")
    assert "Try: --max-resubmits 0 to never resubmit, or up to --max-resubmits 98" in err


@pytest.mark.parametrize(
    ("python", "cli"),
    [
        ("run it with Client(backend='local')", "run it with --local"),
        ('run it with Client(backend="local")', "run it with --local"),
        ("run it with Client(local=LocalSettings())", "run it with --local"),
        ("cancel it first (Client().get_run('ft').cancel())", "cancel it first (gkeml cancel ft)"),
        (
            "cancel it with Client(backend='local').get_run('ft').cancel()",
            "cancel it with gkeml cancel ft --local",
        ),
        ("serve it first with Client().serve(svc)", "serve it first with gkeml serve FILE"),
        (
            "pass Client(kubernetes=KubernetesSettings(kubeconfig=..., context=...)), or",
            "pass --kubeconfig/--context, or",
        ),
        (
            "(Client(kubernetes=KubernetesSettings(namespace='ml')).get_run('ft').cancel())",
            "(gkeml cancel ft)",
        ),
        ("hours=-1 (rule: positive). Try: hours=1", "--cost -1 (rule: positive). Try: --cost 1"),
        ("ModelSize.hours=3 stays", "ModelSize.hours=3 stays"),
    ],
)
def test_cli_words(python, cli):
    assert cli_words(python) == cli
