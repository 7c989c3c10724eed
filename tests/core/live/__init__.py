"""Tests of loom_core.live."""
