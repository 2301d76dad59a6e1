"""Tests of gkeml_sdk/setup/."""
