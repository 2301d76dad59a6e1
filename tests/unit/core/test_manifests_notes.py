"""`Manifests.notes` are written by compile(), count in equality, and equal specs give equal
Manifests."""

from __future__ import annotations

from gkeml_sdk import Accelerator, TrainingJob
from gkeml_sdk.core.manifests import Manifests
from gkeml_sdk.training import manifests as training_manifests

OBJECTS = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}]


def job(name: str = "ft") -> TrainingJob:
    return TrainingJob(name=name, image="img", command=["x"], spot=True,
                       accelerator=Accelerator("h100", count=8), nodes=2)  # fmt: skip


def test_notes_count_in_equality() -> None:
    assert Manifests(objects=OBJECTS) == Manifests(objects=OBJECTS, notes=())
    assert Manifests(objects=OBJECTS) != Manifests(objects=OBJECTS, notes=("n",))


def test_compiling_writes_the_notes(monkeypatch) -> None:
    written: list[str] = []
    real = training_manifests._notes

    def counted(spec: TrainingJob) -> tuple[str, ...]:
        written.append(spec.name)
        return real(spec)

    monkeypatch.setattr(training_manifests, "_notes", counted)
    manifests = job().compile()
    assert written == ["ft"]
    assert any("emptyDir" in note for note in manifests.notes)
    assert written == ["ft"]


def test_equal_specs_give_equal_manifests() -> None:
    first, second = job().compile(), job().compile()
    assert first == second and first.notes == second.notes and first.notes
    assert first.workload == second.workload
    assert first != job("other").compile()
