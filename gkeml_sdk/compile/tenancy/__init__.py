"""Tenant -> namespace isolation, queues, serving with standbys, and header routing."""
