"""Pytest fixtures for the fake kube-apiserver: `kube_api`, `kube_api_factory`, `kube_client`.

Use from a test module with `pytest_plugins = ["tests.kubeapi.fixtures"]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.shared_dir import SHARED

from .crds import shared_crds_dir
from .server import KubeAPIServer

DEFAULT_NAMESPACES = ("default", "kube-system", "ml")  # kube-system: every cluster has it


def require_shared_crds() -> Path:
    """The shared CRD folder, or skip the test with a clear reason."""
    found = shared_crds_dir()
    if found is None:
        pytest.skip(
            f"shared/crds not found at {SHARED / 'crds'}: CRD-backed fake API tests need it"
        )
    return found


@pytest.fixture
def kube_api_factory() -> Iterator[Callable[..., KubeAPIServer]]:
    """Build extra started servers: `make(exclude_crds=["jobset.x-k8s.io"], validate=False)`.

    Defaults: every CRD from shared/crds (pass crd_dir=None for none), namespaces default,
    kube-system and ml.
    All servers are stopped at teardown, and a bug inside the fake server fails the test.
    """
    servers: list[KubeAPIServer] = []

    def make(**kwargs: Any) -> KubeAPIServer:
        if "crd_dir" not in kwargs:
            kwargs["crd_dir"] = require_shared_crds()
        kwargs.setdefault("namespaces", DEFAULT_NAMESPACES)
        server = KubeAPIServer(**kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()
    problems = [err for server in servers for err in server.internal_errors]
    assert not problems, "fake kube-apiserver raised internally:\n" + "\n".join(problems)


@pytest.fixture
def kube_api(kube_api_factory: Callable[..., KubeAPIServer]) -> KubeAPIServer:
    """Started server with all shared CRDs, validation on, namespaces `default`,
    `kube-system` and `ml`."""
    return kube_api_factory()


@pytest.fixture
def kube_client(kube_api: KubeAPIServer) -> Iterator[Any]:
    """`kubernetes.client.ApiClient` bound to `kube_api` (default urllib3 retries)."""
    client = kube_api.api_client()
    yield client
    client.close()
