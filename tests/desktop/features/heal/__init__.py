"""Tests of the heal feature."""
