"""Tests of the doctor feature."""
