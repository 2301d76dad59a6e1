"""A package's public names imported on first use (PEP 562), so importing the package does
not import what a caller never touches.

Example:
    >>> getattr_, dir_ = lazy_exports("pkg", {"dumps": "json"}, ["dumps"], {})
    >>> getattr_("dumps").__name__
    'dumps'
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping


def lazy_exports(
    package: str,
    exports: Mapping[str, str],
    public: list[str],
    namespace: MutableMapping[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`: each name of `exports` is imported from
    its module on first use and kept in `namespace` (the package's globals), so later lookups
    do not come back here."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # importlib.import_module, without importing importlib (and warnings) into every
        # process that imports gkeml_sdk, a local run's supervisor included.
        __import__(module)
        value = getattr(sys.modules[module], name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return public

    return __getattr__, __dir__
