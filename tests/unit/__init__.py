"""Unit tests: pure, no cluster and no network."""
