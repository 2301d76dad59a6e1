"""Node pools through `google-cloud-container`: `NodePool` derives a pool request from an
`Accelerator` or `TpuSlice`, `GkeClient` creates, resizes and deletes pools. The GKE client
library is imported only when a pool is compiled or a client made."""

from __future__ import annotations

from gkeml_sdk.gke.client import GkeClient
from gkeml_sdk.gke.node_pool import NodeNetwork, NodePool

__all__ = ["GkeClient", "NodeNetwork", "NodePool"]
