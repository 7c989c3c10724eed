"""Tests of loom_core.views."""
