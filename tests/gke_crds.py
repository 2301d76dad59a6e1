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

GKE_CRDS = (GCP_DATA_SOURCE,)
