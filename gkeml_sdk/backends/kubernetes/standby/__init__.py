"""Tenants on a cluster: the standby manager, status and drills."""
