"""A `NodePool` as `google.cloud.container_v1` messages: its API JSON (`NodePool.to_dict()`,
built without the client library by `gkeml_sdk.nodepools.manifests`) parsed into
`ListNodePoolsResponse` messages, and messages back to that JSON. The client library
(`container_v1` is heavy) is imported when a function is called, not with this module, so
`gkeml_sdk` exports these names without the `gke` extra."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from google.cloud import container_v1

    from gkeml_sdk.nodepools.model import NodePool


def node_pool_messages(pool: NodePool) -> list[container_v1.NodePool]:
    """One `container_v1.NodePool` message per pool name (per slice of a multislice).

    Example:
        >>> from gkeml_sdk import Accelerator, NodePool
        >>> msg = node_pool_messages(NodePool(name="l4", hardware=Accelerator("l4")))[0]
        >>> msg.config.accelerators[0].accelerator_type, msg.autoscaling.total_max_node_count
        ('nvidia-l4', 1)
    """
    return pools_from_dict(pool.to_dict())


def node_pool_requests(pool: NodePool, parent: str) -> list[container_v1.CreateNodePoolRequest]:
    """`CreateNodePoolRequest`s for cluster `parent` (projects/P/locations/L/clusters/C).

    Example:
        >>> from gkeml_sdk import NodePool, TpuSlice
        >>> pool = NodePool(name="v5e", hardware=TpuSlice("v5e", "4x4", slices=2))
        >>> parent = "projects/p/locations/l/clusters/c"
        >>> [r.node_pool.name for r in node_pool_requests(pool, parent)]
        ['v5e-0', 'v5e-1']
    """
    from gkeml_sdk.backends.gke.library import container_v1

    return [
        container_v1.CreateNodePoolRequest(parent=parent, node_pool=message)
        for message in node_pool_messages(pool)
    ]


def pools_dict(messages: list[container_v1.NodePool]) -> dict[str, Any]:
    """`{"nodePools": [...]}` in the API's camelCase JSON, as a `ListNodePoolsResponse`.

    Example:
        >>> from gkeml_sdk import Accelerator, NodePool
        >>> pool = NodePool(name="l4", hardware=Accelerator("l4"))
        >>> pools_dict(node_pool_messages(pool)) == pool.to_dict()
        True
    """
    from gkeml_sdk.backends.gke.library import container_v1, json_format

    response = container_v1.ListNodePoolsResponse(node_pools=messages)
    listed = container_v1.ListNodePoolsResponse.pb(response)
    as_json: dict[str, Any] = json_format.MessageToDict(listed)
    return as_json


def pools_from_dict(data: dict[str, Any]) -> list[container_v1.NodePool]:
    """Messages from `{"nodePools": [...]}` JSON (`NodePool.to_dict()`, `pools_dict` output or
    a `nodePools.list` answer); an unknown field or enum name raises `json_format.ParseError`.

    Example:
        >>> (msg,) = pools_from_dict({"nodePools": [{"name": "a", "initialNodeCount": 2}]})
        >>> msg.name, msg.initial_node_count
        ('a', 2)
    """
    from gkeml_sdk.backends.gke.library import container_v1, json_format

    listed = container_v1.ListNodePoolsResponse
    response = listed.pb(listed())
    json_format.ParseDict(data, response)
    return list(listed.wrap(response).node_pools)
