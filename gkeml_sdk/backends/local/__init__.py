"""Run a `TrainingJob` on this machine as local processes, with the same environment
contract as on GKE: `Client(backend="local")`, or `LocalBackend` for local-only options.

Example:
    >>> from gkeml_sdk.backends.local import LocalBackend, LocalOptions
    >>> LocalOptions(chaos_after=3).chaos_times
    1
"""

from gkeml_sdk.backends.local.local_backend import LocalBackend
from gkeml_sdk.backends.local.local_options import LocalOptions
from gkeml_sdk.backends.local.local_run import LocalRun

__all__ = ["LocalBackend", "LocalOptions", "LocalRun"]
