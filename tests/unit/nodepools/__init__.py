"""Tests of gkeml_sdk/nodepools/."""
