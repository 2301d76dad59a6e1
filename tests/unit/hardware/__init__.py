"""Tests of gkeml_sdk/hardware/."""
