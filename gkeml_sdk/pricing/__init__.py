"""Accelerator list prices and `CostEstimate`."""
