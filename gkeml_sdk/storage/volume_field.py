"""`LazyVolume`: how a spec's `volumes` items are validated without loading the volume models
up front. Each item goes to `gkeml_sdk.storage.volumes.Volume` (the same discriminated union,
so the same errors at the same places); the models serialise themselves. A spec without
volumes, as most are, never imports or builds them: that was a twentieth of what rendering
one spec ran."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler, TypeAdapter
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema


@functools.cache
def _volumes() -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    from gkeml_sdk.storage.volumes import Volume

    return TypeAdapter(Volume)


def volume_item(value: Any) -> Any:
    """`value` as a volume model: a `GcsFuse`, `Pvc`, `Parallelstore` or `HyperdiskML`, or the
    mapping of one's fields with its `kind` (pydantic's `ValidationError` when it is none).

    Example:
        >>> volume_item({"kind": "pvc", "name": "shared"}).source_uri
        'pvc://shared'
    """
    return _volumes().validate_python(value)


class _VolumeJsonSchema:
    """The volume union's JSON schema, built only when a schema is asked for (editors and
    tools that read `TrainingJob.model_json_schema()` see every volume kind)."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(_volumes().core_schema)


# The runtime field type behind `list[Volume]` where type checkers see `Volume` itself.
LazyVolume = Annotated[Any, BeforeValidator(volume_item), _VolumeJsonSchema()]
