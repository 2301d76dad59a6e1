"""The Kubernetes backend: the only place that talks to a cluster."""
