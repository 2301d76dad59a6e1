"""The run handle every backend returns, its states and history, and the pure readers that turn
Kueue, JobSet and pod status into states and explanations."""
