"""Tests of gkeml_sdk/backends/kubernetes/ that need no cluster."""
