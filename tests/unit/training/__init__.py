"""Tests of gkeml_sdk/training/."""
