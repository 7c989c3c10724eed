"""File ▸ Export: a run as a self-contained HTML page."""
