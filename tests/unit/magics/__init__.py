"""Tests of gkeml_magics/."""
