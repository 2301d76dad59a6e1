"""Fake GKE v1 API (node pools, operations) on loopback: `GkeAPIServer`."""

from .server import GkeAPIServer

__all__ = ["GkeAPIServer"]
