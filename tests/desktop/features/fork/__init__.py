"""Tests of the fork feature."""
