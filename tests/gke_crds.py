"""CRDs that GKE installs itself without publishing a manifest, so ../shared/crds cannot hold
them: written from their public reference, with only the documented fields."""

from __future__ import annotations

from typing import Any

# GKE Volume Populator's GCPDataSource
# (https://cloud.google.com/kubernetes-engine/docs/reference/crds/gcpdatasource).
GCP_DATA_SOURCE: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gcpdatasources.datalayer.gke.io"},
    "spec": {
        "group": "datalayer.gke.io",
        "names": {"kind": "GCPDataSource", "plural": "gcpdatasources"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "apiVersion": {"type": "string"},
                            "kind": {"type": "string"},
                            "metadata": {"type": "object"},
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "cloudStorage": {
                                        "type": "object",
                                        "required": ["uri", "serviceAccountName"],
                                        "properties": {
                                            "serviceAccountName": {"type": "string"},
                                            "uri": {
                                                "type": "string",
                                                "pattern": (
                                                    "^gs://[a-z0-9][a-z0-9._-]+[a-z0-9]/(.*/)?$"
                                                ),
                                            },
                                        },
                                    }
                                },
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


def _cluster_crd(kind: str, plural: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.networking.gke.io"},
        "spec": {
            "group": "networking.gke.io",
            "names": {"kind": kind, "plural": plural},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec,
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


# GKE multi-networking (https://cloud.google.com/kubernetes-engine/docs/how-to/
# setup-multinetwork-support-for-pods, .../gpu-bandwidth-gpudirect-tcpx): the GKE-managed CRDs
# are not published; these hold the documented spec fields (vendored Go types of
# kubernetes/cloud-provider-gcp: GKENetworkParamSetSpec, NetworkSpec).
GKE_NETWORK_PARAM_SET = _cluster_crd(
    "GKENetworkParamSet",
    "gkenetworkparamsets",
    {
        "type": "object",
        "properties": {
            "vpc": {"type": "string"},
            "vpcSubnet": {"type": "string"},
            "deviceMode": {"type": "string", "enum": ["DPDK-VFIO", "NetDevice", "RDMA"]},
            "networkAttachment": {"type": "string"},
            "podIPv4Ranges": {
                "type": "object",
                "properties": {"rangeNames": {"type": "array", "items": {"type": "string"}}},
            },
        },
    },
)
GKE_NETWORK = _cluster_crd(
    "Network",
    "networks",
    {
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {"type": "string", "enum": ["L3", "Device"]},
            "parametersRef": {
                "type": "object",
                "required": ["group", "kind", "name"],
                "properties": {
                    "group": {"type": "string"},
                    "kind": {"type": "string"},
                    "name": {"type": "string"},
                    "namespace": {"type": "string"},
                },
            },
            "provider": {"type": "string"},
            "routes": {
                "type": "array",
                "items": {"type": "object", "properties": {"to": {"type": "string"}}},
            },
        },
    },
)

GKE_CRDS = (GCP_DATA_SOURCE, GKE_NETWORK_PARAM_SET, GKE_NETWORK)
