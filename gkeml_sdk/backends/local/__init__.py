"""Run a `TrainingJob` on this machine as local processes, with the same environment
contract as on GKE: `Client(backend="local")`, or `LocalBackend` for local-only options and
`LocalRunService` for what only a run directory has (a run's files, one process's logs).

Names are imported on first use: the supervisor of a run imports modules of this package
without the backend, which would bring the spec layer along.

Example:
    >>> from gkeml_sdk.backends.local import LocalBackend, LocalOptions
    >>> LocalOptions(chaos_after=3).chaos_times
    1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gkeml_sdk.core.lazy_exports import lazy_exports

_EXPORTS = {
    "LocalBackend": "gkeml_sdk.backends.local.local_backend",
    "LocalOptions": "gkeml_sdk.backends.local.plan.local_options",
    "LocalRunService": "gkeml_sdk.backends.local.runs.local_service",
}
__all__ = ["LocalBackend", "LocalOptions", "LocalRunService"]

if TYPE_CHECKING:
    from gkeml_sdk.backends.local.local_backend import LocalBackend
    from gkeml_sdk.backends.local.plan.local_options import LocalOptions
    from gkeml_sdk.backends.local.runs.local_service import LocalRunService


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())
