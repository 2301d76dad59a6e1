"""Tests of gkeml_sdk/pricing/."""
