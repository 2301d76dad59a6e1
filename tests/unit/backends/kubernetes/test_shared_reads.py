"""A listing's shared reads: each read made once, its answer or its error given to every run."""

from __future__ import annotations

import pytest

from gkeml_sdk.backends.kubernetes.api.shared_reads import SharedReads
from gkeml_sdk.errors import ClusterError


def test_each_read_is_made_once_and_its_error_too() -> None:
    reads, made = SharedReads(), []

    def forbidden() -> list[str]:
        made.append("all namespaces")
        raise ClusterError("list workloads", status=403, reason="Forbidden", message="no")

    def here() -> list[str]:
        made.append("ml")
        return ["w1"]

    for _ in range(3):
        assert reads.once(("workloads", "ml"), here) == ["w1"]
        with pytest.raises(ClusterError, match="Forbidden"):
            reads.once(("workloads", ""), forbidden)
    assert made == ["ml", "all namespaces"]
    assert SharedReads().once(("workloads", "ml"), lambda: ["w2"]) == ["w2"]  # per listing
