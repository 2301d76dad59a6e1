"""Fake kube-apiserver for integration tests (see `KubeAPIServer`)."""

from .crds import shared_crds_dir
from .errors import ApiError
from .faults import FaultInjector, FaultRule, RequestInfo
from .handler import RequestRecord
from .server import KubeAPIServer
from .store import Store, WatchEvent

__all__ = [
    "ApiError",
    "FaultInjector",
    "FaultRule",
    "KubeAPIServer",
    "RequestInfo",
    "RequestRecord",
    "Store",
    "WatchEvent",
    "shared_crds_dir",
]
