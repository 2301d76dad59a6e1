"""Tests of gkeml_sdk/tenancy/."""
