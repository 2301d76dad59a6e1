"""Tenants: isolation tiers, GPU quotas and the models each tenant serves."""
