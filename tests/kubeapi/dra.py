"""Dynamic Resource Allocation for the test API server: the ResourceSlices NVIDIA's DRA driver
publishes for the nodes of a DRA node pool, the DeviceClass its chart installs, and the device
allocation kube-scheduler's DynamicResources plugin makes for a pod's claims.

A device is the driver's view of one whole GPU (`gpu-<i>`), with the `productName` NVML reports
(the catalog row's `nvml_name`) and its `memory` capacity (the row's memory in GiB). Device
selectors are CEL; the forms in use here are evaluated by table, and any other expression fails
the test that meets it (a CEL evaluator is not modelled). Claims are made from the pod's
ResourceClaimTemplates when the pod is bound (the resourceclaim controller makes them first on a
real cluster), named `<pod>-<claim>`, allocated on the pod's node and reserved for it. The GPU
driver NVIDIA's DRA driver needs is taken as installed (GKE leaves it to a driver-installer
DaemonSet on DRA pools, which the setup's notes have the admin apply)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from gkeml_sdk.hardware import gpus
from gkeml_sdk.hardware.dra import GPU_CLASS
from gkeml_sdk.scheduling.gke_nodes import pool_nodes

from .kueue_status import quantity
from .store import Store

Obj = dict[str, Any]
DRIVER = GPU_CLASS  # NVIDIA's DRA driver name, also its DeviceClass's
DEVICE_CLASS: Obj = {  # as NVIDIA's DRA driver chart installs it
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": GPU_CLASS},
    "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}]},
}
_DRIVER = re.compile(r"^device\.driver == '([^']*)'$")
_ATTRIBUTE = re.compile(
    r"^device\.attributes\['([^']*)'\]\.(\w+)(?:\.startsWith\('([^']*)'\)| == '([^']*)')$"
)
_CAPACITY = re.compile(
    r"^device\.capacity\['([^']*)'\]\.(\w+)\.compareTo\(quantity\('([^']*)'\)\) (>=|<=|==) 0$"
)


def resource_slices(pool: Mapping[str, Any], node_names: Iterable[str]) -> list[Obj]:
    """The ResourceSlice NVIDIA's DRA driver publishes on each node of a DRA pool (none for
    a pool whose nodes offer no DRA devices)."""
    nodes = pool_nodes(pool)
    count = nodes.devices.get(GPU_CLASS, 0)
    accelerators = (pool.get("config") or {}).get("accelerators") or []
    if not count or not accelerators:
        return []
    row = gpus.gpu(str(accelerators[0].get("acceleratorType")))
    devices = [
        {
            "name": f"gpu-{i}",
            "attributes": {"productName": {"string": row.nvml_name or row.display}},
            "capacity": {"memory": {"value": f"{row.memory_gb}Gi"}},
        }
        for i in range(count)
    ]
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-{DRIVER}"},
            "spec": {
                "driver": DRIVER,
                "nodeName": name,
                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        }
        for name in node_names
    ]


def claim_requests(store: Store, pod: Mapping[str, Any]) -> list[tuple[str, str, Obj]]:
    """(pod claim name, request name, `exactly` request) of every device request the pod's
    claim templates make."""
    spec = pod.get("spec") or {}
    namespace = (pod.get("metadata") or {}).get("namespace")
    found = []
    for claim in spec.get("resourceClaims") or []:
        template = store.get(
            "resourceclaimtemplates", namespace, str(claim.get("resourceClaimTemplateName"))
        )
        assert template is not None, f"claim {claim.get('name')}: its template is missing"
        for request in template["spec"]["spec"]["devices"].get("requests") or []:
            found.append((str(claim["name"]), str(request["name"]), request["exactly"]))
    return found


def allocate(store: Store, pod: Mapping[str, Any], node: str) -> list[Obj] | None:
    """Each claim request's devices on `node` (results as a claim's status.allocation lists
    them), or None when the node's free devices cannot satisfy them all."""
    taken = {
        (r["driver"], r["pool"], r["device"])
        for claim in store.list("resourceclaims")
        for r in ((claim.get("status") or {}).get("allocation") or {})
        .get("devices", {})
        .get("results", [])
    }
    free = [
        (s["spec"]["driver"], s["spec"]["pool"]["name"], device)
        for s in store.list("resourceslices")
        if s["spec"].get("nodeName") == node
        for device in s["spec"].get("devices") or []
    ]
    results: list[Obj] = []
    for claim, request, exactly in claim_requests(store, pod):
        device_class = store.get("deviceclasses", None, exactly["deviceClassName"])
        if device_class is None:
            return None
        selectors = [
            *(device_class["spec"].get("selectors") or []),
            *(exactly.get("selectors") or []),
        ]
        fits = [
            (driver, pool, device)
            for driver, pool, device in free
            if (driver, pool, device["name"]) not in taken
            and all(_selected(s["cel"]["expression"], driver, device) for s in selectors)
        ]
        wanted = len(fits) if exactly.get("allocationMode") == "All" else exactly.get("count", 1)
        if not fits or len(fits) < wanted:
            return None
        for driver, pool, device in fits[:wanted]:
            taken.add((driver, pool, device["name"]))
            results.append(
                {
                    "claim": claim,
                    "request": request,
                    "driver": driver,
                    "pool": pool,
                    "device": device["name"],
                }
            )
    return results


def _selected(expression: str, driver: str, device: Mapping[str, Any]) -> bool:
    if match := _DRIVER.match(expression):
        return driver == match.group(1)
    if match := _ATTRIBUTE.match(expression):
        domain, name, prefix, equal = match.groups()
        value = ((device.get("attributes") or {}).get(name) or {}).get("string")
        if domain != driver or value is None:
            return False
        return value.startswith(prefix) if prefix is not None else value == equal
    if match := _CAPACITY.match(expression):
        domain, name, bound, op = match.groups()
        value = ((device.get("capacity") or {}).get(name) or {}).get("value")
        if domain != driver or value is None:
            return False
        have, limit = quantity(value), quantity(bound)
        return {">=": have >= limit, "<=": have <= limit, "==": have == limit}[op]
    raise AssertionError(f"CEL selector not modelled by the test API server: {expression}")


def device_count(
    store: Store, pod: Mapping[str, Any], mapping: Mapping[str, str]
) -> dict[str, Decimal]:
    """What Kueue charges for a pod's claims: each request's count to the quota resource its
    DeviceClass maps to (resources.deviceClassMappings); an unmapped class raises KeyError."""
    charged: dict[str, Decimal] = {}
    for _, _, exactly in claim_requests(store, pod):
        resource = mapping[exactly["deviceClassName"]]
        charged[resource] = charged.get(resource, Decimal(0)) + Decimal(exactly.get("count", 1))
    return charged
