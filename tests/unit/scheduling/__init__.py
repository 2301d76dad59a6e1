"""Tests of gkeml_sdk/scheduling/."""
