"""Local runs for `Run` handles: `LocalRunService` (every verb of the `RunService` port, all
per-run logic) and what it reads runs with: their state with the outcome of a lost supervisor,
their logs, and how a run is stopped."""
