"""Tests of the compare feature."""
