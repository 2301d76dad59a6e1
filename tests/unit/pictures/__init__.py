"""Tests of gkeml_sdk/pictures/."""
