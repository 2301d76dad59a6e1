"""The base every feature stands on: the frozen model base and YAML round trip, Kubernetes
name, quantity and label rules, readers of object dicts, and `Manifests`."""
