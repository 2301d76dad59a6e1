"""What the cluster has set up, read before anything is written: preflight checks of queues,
capacity and topology, setup advice, and `plan_setup`/`apply_setup`."""
