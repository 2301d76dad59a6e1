"""A networking stack's part of a pod: the multi-network annotations, the receive-datapath
daemon as a native sidecar, the host volumes, the NCCL environment, and the cluster
prerequisites as notes."""

from __future__ import annotations

import json

from gkeml_sdk.core.objects import Obj
from gkeml_sdk.hardware.network import NetworkChoice
from gkeml_sdk.hardware.network_row import NetworkStack

DEFAULT_INTERFACE = "networking.gke.io/default-interface"
INTERFACES = "networking.gke.io/interfaces"
DEVICES_PREFIX = "devices.gke.io/container."
# A pod on the node's network resolves cluster names only with this DNS policy (Kubernetes
# "DNS for Services and Pods", Pod's DNS policy).
HOST_NETWORK_DNS_POLICY = "ClusterFirstWithHostNet"
# Where GKE's NRI device injector, which serves those annotations, reaches containerd's NRI.
NRI_SOCKET_DIR = "/var/run/nri"


def add_network(template: Obj, stack: NetworkStack | None, app: str) -> Obj:
    """`template` (a PodTemplateSpec) with `stack`'s pod fragment merged in; `app` names the
    container that runs NCCL. User-set variables of the same name win over the stack's.

    Example:
        >>> from gkeml_sdk.hardware.network_stacks import stack
        >>> t = add_network({"metadata": {}, "spec": {"containers": [{"name": "main"}]}},
        ...                 stack("rdma-a4"), "main")
        >>> t["metadata"]["annotations"]["networking.gke.io/default-interface"]
        'eth0'
        >>> [v["name"] for v in t["spec"]["volumes"]]
        ['nvidia', 'gib']
    """
    if stack is None:
        return template
    metadata, spec = template["metadata"], template["spec"]
    annotations = metadata.setdefault("annotations", {})
    for key, value in _annotations(stack).items():
        annotations.setdefault(key, value)
    if stack.node_labels:
        spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **dict(stack.node_labels)}
    container = next(c for c in spec["containers"] if c["name"] == app)
    taken = {e["name"] for e in container.get("env", [])}
    extra = [{"name": k, "value": v} for k, v in stack.env if k not in taken]
    if extra:
        container["env"] = [*container.get("env", []), *extra]
    mounts = [{"name": v.name, "mountPath": v.app_path} for v in stack.volumes if v.app_path]
    if mounts:
        container["volumeMounts"] = [*container.get("volumeMounts", []), *mounts]
    if stack.app_capabilities:
        context = container.setdefault("securityContext", {})
        context["capabilities"] = {"add": list(stack.app_capabilities)}
    if stack.volumes:
        volumes = [{"name": v.name, "hostPath": {"path": v.host_path}} for v in stack.volumes]
        spec["volumes"] = [*spec.get("volumes", []), *volumes]
    if stack.daemon is not None:
        # A native sidecar (init container that keeps running): it starts before the app
        # and stops after it, so a Job still completes when the app exits.
        spec["initContainers"] = [*spec.get("initContainers", []), _daemon(stack)]
    return template


def network_notes(choice: NetworkChoice) -> list[str]:
    """What the cluster must have for `choice`, and why `auto` fell back, one note each.

    Example:
        >>> from gkeml_sdk import Accelerator
        >>> from gkeml_sdk.hardware.network import choose_network
        >>> notes = network_notes(choose_network(Accelerator("h200", count=8), 2, "auto"))
        >>> notes[0].split(":")[0]
        'GPUDirect-RDMA on a3-ultragpu-8g'
    """
    notes = [choice.reason] if choice.reason else []
    stack = choice.stack
    if stack is None:
        return notes
    if stack.networks:
        notes.append(stack.network_prerequisite(choice.machine or "this machine"))
    notes.extend(f"{stack.display}: {p}" for p in stack.prerequisites)
    return notes


def _annotations(stack: NetworkStack) -> dict[str, str]:
    if not stack.networks:
        return {}
    interfaces = [{"interfaceName": "eth0", "network": "default"}] + [
        {"interfaceName": f"eth{i}", "network": name}
        for i, name in enumerate(stack.networks, start=1)
    ]
    annotations = {
        DEFAULT_INTERFACE: "eth0",
        INTERFACES: json.dumps(interfaces, separators=(",", ":")),
    }
    if stack.daemon is not None:
        devices = "".join(f"- path: {path}\n" for path in stack.daemon.devices)
        annotations[DEVICES_PREFIX + stack.daemon.name] = devices
    return annotations


def _daemon(stack: NetworkStack) -> Obj:
    daemon = stack.daemon
    assert daemon is not None
    mounts = [{"name": v.name, "mountPath": v.daemon_path} for v in stack.volumes if v.daemon_path]
    return {
        "name": daemon.name,
        "image": daemon.image,
        "imagePullPolicy": "Always",
        "restartPolicy": "Always",
        "command": list(daemon.command),
        "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
        "securityContext": {"capabilities": {"add": list(daemon.capabilities)}},
        "volumeMounts": mounts,
    }
