"""Tenants on a cluster: the standby manager, its leader election, status and drills."""
