"""Tests of loom_core (no Qt); a package so helper modules import relatively."""
