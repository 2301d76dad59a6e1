"""The backends, the only code that does I/O: a Kubernetes cluster, this machine, and GKE's API."""
