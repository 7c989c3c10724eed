"""Tests of loom_desktop.integration."""
