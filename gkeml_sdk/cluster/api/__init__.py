"""The Kubernetes API client: transport with retries, typed verbs, watch streams, preflight."""
