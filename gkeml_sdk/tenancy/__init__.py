"""Tenants and tiers: isolation, queues, serving with standbys, and header routing."""
