"""The lazily validated `volumes` field keeps the volume union's JSON schema."""

from __future__ import annotations

from gkeml_sdk import TrainingJob


def test_the_json_schema_of_volumes_names_every_volume_kind() -> None:
    schema = TrainingJob.model_json_schema()
    items = schema["properties"]["volumes"]["items"]
    assert set(items["discriminator"]["mapping"]) == {
        "gcsfuse",
        "hyperdisk-ml",
        "parallelstore",
        "pvc",
    }
    assert {"GcsFuse", "Pvc", "Parallelstore", "HyperdiskML"} <= set(schema["$defs"])
