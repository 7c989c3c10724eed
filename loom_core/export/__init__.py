"""Export a run as a self-contained HTML page (File ▸ Export, ``export-html``)."""
