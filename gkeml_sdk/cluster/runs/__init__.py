"""The run lifecycle on a cluster: run records, attempts, status from Kueue/JobSet, logs."""
