"""Tests of gkeml_sdk/core/."""
