"""Widgets of the main window: timeline, step list, context view."""
