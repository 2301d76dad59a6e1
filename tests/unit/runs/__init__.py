"""Tests of gkeml_sdk/runs/."""
