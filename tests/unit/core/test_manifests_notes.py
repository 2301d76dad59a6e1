"""`Manifests.notes` are written when first read, once, and count in equality; a compile that
is only submitted never writes them. Reading them gives what the eager notes gave."""

from __future__ import annotations

from gkeml_sdk import Accelerator, TrainingJob
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.training import manifests as training_manifests

OBJECTS = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]


def test_notes_are_written_once_when_first_read() -> None:
    calls: list[int] = []

    def notes() -> list[str]:
        calls.append(1)
        return ["a note"]

    manifests = Manifests(objects=OBJECTS, notes_of=notes)
    assert calls == []
    assert manifests.notes == ("a note",)
    assert manifests.notes == ("a note",)
    assert calls == [1]


def test_notes_count_in_equality() -> None:
    assert Manifests(objects=OBJECTS) == Manifests(objects=OBJECTS, notes_of=list)
    assert Manifests(objects=OBJECTS) != Manifests(objects=OBJECTS, notes_of=lambda: ["n"])


def test_compiling_writes_no_notes_until_they_are_read(monkeypatch) -> None:
    written: list[str] = []
    real = training_manifests._notes

    def counted(job: TrainingJob) -> tuple[str, ...]:
        written.append(job.name)
        return real(job)

    monkeypatch.setattr(training_manifests, "_notes", counted)
    job = TrainingJob(name="ft", image="img", command=["x"], spot=True,
                      accelerator=Accelerator("h100", count=8), nodes=2)  # fmt: skip
    manifests = job.compile()
    manifests.to_yaml()
    assert written == []
    assert any("emptyDir" in note for note in manifests.notes)
    assert written == ["ft"]
