"""Fixtures shared by every test: the fake kube-apiserver (tests/kubeapi/fixtures.py)."""

pytest_plugins = ["tests.kubeapi.fixtures"]
