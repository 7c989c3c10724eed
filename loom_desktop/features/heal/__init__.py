"""Heal: the dialog, its setup and candidate table, and the runner that tries each repair."""
