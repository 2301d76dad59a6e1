"""Schema versions of what gkeml persists for itself (run records, local run files, tenant
status): every record written carries `schema: N`, a record without one is the layout written
before records were versioned (read as it always was), and a record this SDK cannot read is
refused with what to do, never half-read. Each record kind keeps its own version constant next
to its reader and writer; this module only checks the number."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gkeml_sdk.errors import ConfigError, excerpt
from gkeml_sdk.version import __version__

SCHEMA_KEY = "schema"
# A record without a schema was written before records were versioned: the layout that
# schema 1 names (schema 1 only added the key).
UNVERSIONED = 1
_WHOLE = re.compile(r"-?[0-9]+")


def record_schema(record: str, data: object, current: int) -> int:
    """The schema version of `data` (the mapping a record was stored as), checked against
    `current`, the newest version this SDK writes and reads. Raises `ConfigError` naming
    `record` when the version is newer, older than any this SDK reads, or not a number.
    ConfigMap data holds strings, so `"2"` is read as 2.

    Example:
        >>> record_schema("state.json", {"name": "a"}, 1)
        1
        >>> record_schema("state.json", {"schema": 3}, 1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.ConfigError: state.json has schema 3, but gkeml ... reads schema 1...
    """
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{record} is not a mapping of fields but {type(data).__name__}: it was damaged or "
            "edited by hand; delete it, or restore it from what gkeml wrote"
        )
    found = _version(data)
    reads = f"gkeml {__version__} reads schema {current} (and records written without one)"
    if found is None:
        raise ConfigError(
            f"{record} has schema {excerpt(repr(data[SCHEMA_KEY]))}, which is no version "
            f"number: {reads}; it was damaged or edited by hand"
        )
    if found > current:
        raise ConfigError(
            f"{record} has schema {found}, but {reads}: a newer gkeml wrote it. "
            "Upgrade gkeml (pip install -U gkeml) to read it"
        )
    if found < UNVERSIONED:
        raise ConfigError(
            f"{record} has schema {found}, an older layout than any this SDK knows: {reads}; "
            "no gkeml release writes it, so it was edited by hand or by another tool"
        )
    return found


def _version(data: Mapping[str, Any]) -> int | None:
    """The stored version: UNVERSIONED when absent, None when it is not a whole number."""
    if SCHEMA_KEY not in data:
        return UNVERSIONED
    value = data[SCHEMA_KEY]
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        return int(value)
    return None
