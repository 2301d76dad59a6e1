"""The GKE client library (the `gke` extra), or an ImportError that says how to install it."""

from __future__ import annotations

try:
    from google.auth.exceptions import DefaultCredentialsError
    from google.cloud import container_v1
    from google.protobuf import json_format
except ImportError as exc:
    raise ImportError(
        "gkeml node pools need the GKE client library: pip install 'gkeml[gke]'"
    ) from exc

__all__ = ["DefaultCredentialsError", "container_v1", "json_format"]
