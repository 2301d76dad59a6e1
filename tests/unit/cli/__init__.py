"""Tests of gkeml_sdk/cli/."""
