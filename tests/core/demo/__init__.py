"""Tests of loom_core.demo."""
