"""User-facing spec models; every GKE/Kueue rule is checked here, at construction."""
