"""Tests of loom_desktop.features, one folder per feature."""
