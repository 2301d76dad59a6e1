"""The local run store stays inside its root whatever names it is given: every attack leaves
a sentinel directory outside the root intact and raises an SDK error."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gkeml_sdk import (
    Client,
    ConfigError,
    GkemlError,
    LocalSettings,
    NotFoundError,
    SpecError,
    TrainingJob,
)
from gkeml_sdk.backends.local import LocalBackend
from gkeml_sdk.backends.local.store.run_state import LocalRunState
from gkeml_sdk.backends.local.store.run_store import RunDir
from gkeml_sdk.backends.local.system.confined import remove_run_dir, run_path
from gkeml_sdk.runs.handle import RunState, RunStatus

BAD_NAMES = [
    "../victim",
    "a/../../victim",
    "..",
    ".",
    "",
    "/abs/victim",
    "victim\n",
    "vic\x00tim",
    "Victim",
    "vic/tim",
    "-victim",
    "x" * 64,
]


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A run root and, next to it, a victim directory that looks like a finished run."""
    root = tmp_path / "root"
    root.mkdir()
    victim = tmp_path / "victim"
    fake_run(victim)
    return root, victim


def fake_run(path: Path) -> None:
    path.mkdir(parents=True)
    (path / "precious.txt").write_text("keep me")
    record = LocalRunState(path.name, "default", time.time())
    record.move(RunStatus(RunState.SUCCEEDED, "Completed"))
    RunDir(path).write(record)


def intact(victim: Path) -> bool:
    return (victim / "precious.txt").read_text() == "keep me"


def job(**fields: object) -> TrainingJob:
    return TrainingJob(name="ft", command=["python", "-c", "pass"])


@pytest.mark.parametrize("namespace", BAD_NAMES)
def test_a_bad_namespace_is_refused_at_construction(layout, namespace: str) -> None:
    root, victim = layout
    with pytest.raises(SpecError, match="not a valid name") as info:
        LocalBackend(run_dir=root, namespace=namespace)
    assert info.value.rule and info.value.fix and info.value.field == "namespace"
    with pytest.raises(SpecError):
        Client(local=LocalSettings(run_dir=root, namespace=namespace))
    assert intact(victim)


@pytest.mark.parametrize("bad", BAD_NAMES)
@pytest.mark.parametrize("field", ["name", "namespace"])
def test_submit_refuses_a_job_that_skipped_validation(layout, bad: str, field: str) -> None:
    root, victim = layout
    # model_copy does not validate: the store must not trust the spec to have done it.
    forged = job().model_copy(update={field: bad})
    with pytest.raises(SpecError, match=f"local run {field}"):
        LocalBackend(run_dir=root).submit(forged)
    assert intact(victim)
    assert not (root.parent / "x").exists()


def test_the_recorded_attack_no_longer_deletes_the_victim(layout) -> None:
    root, victim = layout
    # namespace '..' and name 'victim' used to resolve to <root>/../victim and delete it.
    forged = job().model_copy(update={"name": "victim"})
    with pytest.raises(GkemlError):
        LocalBackend(run_dir=root, namespace="..").submit(forged)
    with pytest.raises(GkemlError):
        LocalBackend(run_dir=root).submit(forged.model_copy(update={"namespace": ".."}))
    assert intact(victim)


@pytest.mark.parametrize("name", [*BAD_NAMES, "../../victim", str(Path("..") / "victim")])
def test_get_run_and_delete_refuse_raw_names(layout, name: str) -> None:
    root, victim = layout
    (root / "default").mkdir()
    backend = LocalBackend(run_dir=root)
    with pytest.raises(SpecError, match="local run name"):
        backend.get_run(name)
    with pytest.raises(SpecError, match="local run name"):
        backend.delete(name)
    with pytest.raises(SpecError, match="local run name"):
        Client(local=LocalSettings(run_dir=root)).get_run(name)
    assert intact(victim)


def test_a_run_directory_replaced_by_a_link_is_never_followed(layout) -> None:
    root, victim = layout
    fake_run(root / "default" / "ft")
    backend = LocalBackend(run_dir=root)
    assert backend.get_run("ft").status.state is RunState.SUCCEEDED
    (root / "default" / "ft" / "precious.txt").unlink()
    for child in (root / "default" / "ft").iterdir():
        child.unlink()
    (root / "default" / "ft").rmdir()
    (root / "default" / "ft").symlink_to(victim)
    with pytest.raises(ConfigError, match="symbolic link"):
        backend.submit(job())
    with pytest.raises(ConfigError, match="symbolic link"):
        backend.delete("ft")
    with pytest.raises(ConfigError, match="symbolic link"):
        backend.get_run("ft")
    with pytest.raises(ConfigError, match="symbolic link"):
        remove_run_dir(root, "default", "ft")
    assert backend.runs() == []
    assert intact(victim)


def test_a_namespace_directory_replaced_by_a_link_is_never_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    fake_run(outside / "ft")
    (root / "default").symlink_to(outside)
    backend = LocalBackend(run_dir=root)
    with pytest.raises(ConfigError, match="symbolic link"):
        backend.submit(job())
    with pytest.raises(NotFoundError):  # a linked namespace holds no run of ours
        backend.delete("ft")
    with pytest.raises(ConfigError, match="symbolic link"):
        LocalBackend(run_dir=root, namespace="default").submit(job())
    with pytest.raises(ConfigError, match="symbolic link"):
        remove_run_dir(root, "default", "ft")
    assert backend.runs() == [] and LocalBackend(run_dir=root, namespace="default").runs() == []
    assert intact(outside / "ft")


def test_a_link_inside_a_run_directory_is_removed_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    fake_run(root / "default" / "ft")
    victim = tmp_path / "victim"
    fake_run(victim)
    (root / "default" / "ft" / "logs").symlink_to(victim)
    LocalBackend(run_dir=root).delete("ft")
    assert not (root / "default" / "ft").exists()
    assert intact(victim)


def test_run_path_refuses_a_root_escape_through_a_link_outside_the_checked_parts(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    (root / "default").mkdir(parents=True)
    assert run_path(root, "default", "ft") == root / "default" / "ft"
    # A root that is itself a link is the user's choice and is followed.
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    assert run_path(alias, "default", "ft") == alias / "default" / "ft"


def test_stray_entries_under_the_root_are_skipped_when_listing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    fake_run(root / "default" / "ft")
    fake_run(root / "Bad Namespace" / "x")
    fake_run(root / "default" / "Not.A.Run")
    (root / "file").write_text("")
    os.symlink(tmp_path, root / "default" / "link")
    assert [r.ref.name for r in LocalBackend(run_dir=root).runs()] == ["ft"]
