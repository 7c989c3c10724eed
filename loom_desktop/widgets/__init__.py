"""Reusable widgets only: the timeline (pyqtgraph) with its bars, axis and legend, and the context view."""
