"""Tests of loom_desktop.infra."""
