"""`%%gke_train --workdir/--requirements/--pip`: a project folder from the notebook, with the
mistakes a line can make named."""

from __future__ import annotations

import pytest

from gkeml_magics.options import MagicDefaults, train_job
from gkeml_magics.parsers import OptionError, parse, train_parser


def job_of(line: str, cell: str = ""):
    return train_job(parse(train_parser(), line), MagicDefaults(), cell)


def test_pip_lists_requirements_and_the_name_comes_from_the_folder(tmp_path):
    folder = tmp_path / "llama-ft"
    folder.mkdir()
    job = job_of(f"--workdir {folder} --command 'python train.py' --pip six --pip idna==3.7")
    assert job.requirements == ["six", "idna==3.7"]
    assert job.name.startswith("llama-ft-") and job.command == ["python", "train.py"]
    assert job_of(f"--workdir {folder} --command 'python train.py' --pip six").name != job.name


@pytest.mark.parametrize(
    ("line", "cell", "said"),
    [
        ("--command 'python t.py' --requirements r.txt --pip six", "", "not both"),
        ("--command 'python t.py'", "print(1)", "leave the cell empty"),
        ("", "", "--workdir needs --command"),
    ],
)
def test_what_does_not_fit_a_workdir_is_an_option_error(tmp_path, line, cell, said):
    with pytest.raises(OptionError, match=said):
        job_of(f"--workdir {tmp_path} {line}", cell)
