"""Tests of loom_core.cli: the commands as a user runs them."""
