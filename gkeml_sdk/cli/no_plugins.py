"""Stands in for `pydantic.plugin._loader` in a `gkeml` process that turned pydantic's plugins
off (`PYDANTIC_DISABLE_PLUGINS=__all__`). pydantic then finds no plugin without looking, but
importing its loader still imports `importlib.metadata` (with `email`, `csv` and more) only
to never call it; this module answers `get_plugins()` the same way, importing nothing."""

from __future__ import annotations

# The values of PYDANTIC_DISABLE_PLUGINS for which pydantic's own loader returns no plugin
# before it looks at any installed package.
DISABLED = frozenset({"__all__", "1", "true"})


def get_plugins() -> tuple[()]:
    """No plugins, as pydantic's loader answers when plugins are disabled.

    Example:
        >>> get_plugins()
        ()
    """
    return ()
