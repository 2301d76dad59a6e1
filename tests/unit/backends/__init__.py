"""Tests of gkeml_sdk/backends/."""
