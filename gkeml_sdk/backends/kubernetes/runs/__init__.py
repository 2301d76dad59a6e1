"""Runs on the cluster: their records, attempts, per-run tracking and lifecycle (the one
writer of a record), submission, listing and logs."""
