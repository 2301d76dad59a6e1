"""Tests of gkeml_sdk/serving/."""
