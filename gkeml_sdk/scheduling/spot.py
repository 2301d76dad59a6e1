"""Spot VM facts on GKE (https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms)."""

from __future__ import annotations

SPOT_LABEL = "cloud.google.com/gke-spot"
SPOT_TAINT_KEY = "cloud.google.com/gke-spot"
# kubelet graceful node shutdown gives non-system pods 15 s on Spot; longer grace has no
# effect unless the node pool is configured for up to 120 s.
SPOT_DEFAULT_GRACE_SECONDS = 15
SPOT_MAX_GRACE_SECONDS = 120
SPOT_NOTICE_SECONDS = 30
DEFAULT_GRACE_SECONDS = 30
