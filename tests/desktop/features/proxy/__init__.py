"""Tests of the proxy and approvals feature."""
