"""Pure functions from specs to Kubernetes manifests (ordered plain dicts); no I/O."""
