"""Tests of gkeml_sdk/storage/."""
