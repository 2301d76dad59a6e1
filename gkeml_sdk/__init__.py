"""gkeml: typed GPU/TPU training and LLM serving on GKE through Kueue."""
