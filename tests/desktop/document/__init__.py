"""Tests of loom_desktop.document: the tab, live following and the step list."""
