"""Tests of loom_core.formats."""
