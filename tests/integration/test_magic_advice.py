"""The magics show library errors with the advice in magic options: the library says
`max_runtime='2h'` or `Client(backend='local')`, the magic says `--max-runtime 2h`, `--local`."""

from __future__ import annotations

from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from gkeml_magics.advice import magic_words


@pytest.fixture(scope="module")
def shell() -> InteractiveShell:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gkeml_magics")
    return ip


@pytest.fixture(autouse=True)
def no_cluster(shell: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GKEML_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    shell.run_line_magic("gke_config", "--reset")


def usage_error(shell: InteractiveShell, source: str) -> str:
    with capture_output():
        result = shell.run_cell(source)
    assert isinstance(result.error_in_exec, UsageError)
    message = str(result.error_in_exec)
    assert "Client(" not in message and "max_runtime=" not in message, message
    return message


def test_spec_errors_name_the_magic_options(shell):
    message = usage_error(shell, "%%gke_train --dry-run --max-runtime soon\nprint(1)")
    assert message.startswith("--max-runtime soon is not a duration")
    assert "Try: --max-runtime 2h30m or --max-runtime 9000" in message


def test_no_cluster_names_gke_config_and_local(shell):
    message = usage_error(shell, "%%gke_train --image img --no-wait\nprint(1)")
    assert "%gke_config --kubeconfig/--context" in message and "with --local" in message


def test_unknown_local_run_points_at_gke_jobs(shell):
    assert "list the runs with %gke_jobs --local" in usage_error(shell, "%gke_cancel nope --local")


@pytest.mark.parametrize(
    ("python", "magic"),
    [
        ("Try: spot=True or a larger GPU", "Try: --spot or a larger GPU"),
        ("Try: name='ft-2'", "Try: --name ft-2"),
        ("Try: checkpoint_dir='gs://BUCKET/PATH'", "Try: --checkpoint-dir gs://BUCKET/PATH"),
        ("Try: hours=1", "Try: --hours 1"),
        ("Try: secret_env={'K': 'secret/key'}", "Try: secret_env={'K': 'secret/key'}"),
        ("Try: ModelSize.nodes=2", "Try: ModelSize.nodes=2"),
        (
            "or a path under a writable volume of volumes=[...]; or stateless=True when",
            "or a path under a writable volume of --fields VAR with VAR = {'volumes': [...]}; "
            "or --stateless when",
        ),
        ("Try: service_account='trainer'", "Try: --service-account trainer"),
        (
            "cancel it with Client(local=LocalSettings()).get_run('ft').cancel()",
            "cancel it with %gke_cancel ft --local",
        ),
    ],
)
def test_magic_words(python, magic):
    assert magic_words(python) == magic
